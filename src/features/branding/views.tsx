import { AA_TEXT_CONTRAST, contrastRatio } from '../../shared/contrast'
import type { FormState, FormValues } from '../../shared/forms'
import { BUTTON_LABEL_COLOR, CARD_COLOR } from '../../shared/views/brand'
import { Alert, FieldError, HxForm, TextField } from '../../shared/views/components'
import type { BrandingModel } from './model'

const brandingPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/settings/branding`

type BrandingField = keyof BrandingModel.Update

/** The hosted pages' own colours: what an unset field looks like. */
const PLATFORM = { primary: '#4f46e5', background: '#f3f4f8', text: '#1f2330' }

type ColourField = 'primary_color' | 'background_color' | 'text_color'
const PLATFORM_OF: Record<ColourField, keyof typeof PLATFORM> = {
  primary_color: 'primary',
  background_color: 'background',
  text_color: 'text',
}

const brandingValues = (v: BrandingModel.View): FormValues<BrandingField> => ({
  display_name: v.display_name ?? '',
  primary_color: v.primary_color ?? '',
  background_color: v.background_color ?? '',
  text_color: v.text_color ?? '',
  privacy_policy_url: v.privacy_policy_url ?? '',
  terms_url: v.terms_url ?? '',
})

const HEX = /^#[0-9a-fA-F]{6}$/
const colourOr = (value: string, platform: string) => (HEX.test(value) ? value.toLowerCase() : platform)

/**
 * WCAG AA asks 4.5:1 of text: the white label on the primary colour (buttons) and the text colour
 * on the white card. Computed here for the page as drawn, and again by public/app.js as the form
 * changes (the same formula); each line is hidden while its pair passes.
 */
function ContrastWarnings({ values }: { values: FormValues<BrandingField> }) {
  const primary = colourOr(values.primary_color, PLATFORM.primary)
  const text = colourOr(values.text_color, PLATFORM.text)
  const pairs = [
    {
      id: 'branding-contrast-primary',
      ratio: contrastRatio(BUTTON_LABEL_COLOR, primary),
      what: 'White button text on the primary colour',
    },
    {
      id: 'branding-contrast-text',
      ratio: contrastRatio(text, CARD_COLOR),
      what: 'The text colour on the white sign-in card',
    },
  ]
  return (
    <div id="branding-contrast">
      {pairs.map((p) => (
        <div
          class="alert warn"
          role="status"
          id={p.id}
          data-what={p.what}
          hidden={p.ratio >= AA_TEXT_CONTRAST}
          safe
        >
          {`${p.what} has a contrast of ${p.ratio.toFixed(2)}:1, below the ${AA_TEXT_CONTRAST}:1 WCAG AA asks of text. Some users will not be able to read it.`}
        </div>
      ))}
    </div>
  )
}

/**
 * The sign-in card as the workspace's users will see it, redrawn by public/app.js from the form as
 * it is typed (the colours are set through the CSSOM: the policy allows no inline style).
 */
function Preview({ values, logoUrl }: { values: FormValues<BrandingField>; logoUrl: string | null }) {
  return (
    <section
      class="branding-preview"
      id="branding-preview"
      data-primary={colourOr(values.primary_color, PLATFORM.primary)}
      data-background={colourOr(values.background_color, PLATFORM.background)}
      data-text={colourOr(values.text_color, PLATFORM.text)}
      aria-label="Preview of the sign-in page"
    >
      <div class="preview-card">
        <div class="preview-brand">
          <PreviewLogo logoUrl={logoUrl} />
          <strong id="branding-preview-name" safe>
            {values.display_name}
          </strong>
        </div>
        <p class="preview-title">Sign in</p>
        <span class="preview-input">you@example.com</span>
        <span class="preview-button" id="branding-preview-button">
          Sign in
        </span>
        <span class="preview-link">Forgot your password?</span>
      </div>
    </section>
  )
}

/** The preview's logo; a logo upload or removal replaces it out of band. */
export function PreviewLogo({ logoUrl, oob }: { logoUrl: string | null; oob?: boolean }) {
  return (
    <img
      id="branding-preview-logo"
      src={logoUrl ?? undefined}
      alt=""
      hidden={!logoUrl}
      hx-swap-oob={oob ? 'true' : undefined}
    />
  )
}

function BrandingForm({
  workspaceId,
  values,
  errors = {},
  saved,
}: { workspaceId: string; values: FormValues<BrandingField>; saved?: boolean } & FormState<BrandingField>) {
  const field = (
    name: BrandingField,
    label: string,
    hint: string,
    more: { maxlength?: number; placeholder: string },
  ) => (
    <TextField
      id={`branding-${name.replaceAll('_', '-')}`}
      name={name}
      label={label}
      value={values[name]}
      error={errors[name]}
      hint={hint}
      {...more}
    />
  )
  // The hex field is what the form sends; the picker beside it (no name) only fills it in, and
  // public/app.js keeps the two in step.
  const colour = (name: ColourField, label: string, hint: string) => (
    <div class="colour-field">
      {field(name, label, hint, { maxlength: 7, placeholder: '#rrggbb' })}
      <input
        type="color"
        id={`branding-${name.replaceAll('_', '-')}-picker`}
        aria-label={`${label} picker`}
        value={colourOr(values[name], PLATFORM[PLATFORM_OF[name]])}
        data-hex-for={`branding-${name.replaceAll('_', '-')}`}
        data-platform={PLATFORM[PLATFORM_OF[name]]}
      />
    </div>
  )
  const link = (name: 'privacy_policy_url' | 'terms_url', label: string, hint: string, path: string) =>
    field(name, label, hint, { maxlength: 2000, placeholder: `https://example.com/${path}` })
  return (
    <HxForm
      id="branding-form"
      action={brandingPath(workspaceId)}
      target="#branding"
      swap="outerHTML"
      invalid={Object.keys(errors).length > 0}
      done={saved ? 'Saved. The hosted pages show it now.' : undefined}
    >
      {field('display_name', 'Display name', 'Shown above every sign-in page and in mails. Empty: none.', {
        maxlength: 100,
        placeholder: 'Acme',
      })}
      {colour('primary_color', 'Primary colour', `Buttons and links. Empty: ${PLATFORM.primary}.`)}
      {colour(
        'background_color',
        'Background colour',
        `Behind the sign-in card. Empty: ${PLATFORM.background}.`,
      )}
      {colour('text_color', 'Text colour', `The card's text. Empty: ${PLATFORM.text}.`)}
      {link(
        'privacy_policy_url',
        'Privacy policy URL',
        'https only. Linked under every hosted page.',
        'privacy',
      )}
      {link('terms_url', 'Terms URL', 'https only.', 'terms')}
      <p>
        <button class="btn" type="submit">
          Save branding
        </button>
      </p>
    </HxForm>
  )
}

/** The logo, its upload (with a progress bar public/app.js fills) and its removal: `#branding-logo`. */
export function LogoPanel({
  workspaceId,
  logoUrl,
  canWrite,
  error,
  done,
}: {
  workspaceId: string
  logoUrl: string | null
  canWrite: boolean
  error?: string
  done?: string
}) {
  const path = brandingPath(workspaceId)
  return (
    <div class="panel" id="branding-logo">
      <h2>Logo</h2>
      {done ? (
        <Alert kind="ok">
          <span safe>{done}</span>
        </Alert>
      ) : (
        ''
      )}
      {logoUrl ? (
        <img class="branding-logo" id="branding-logo-current" src={logoUrl} alt="The current logo" />
      ) : (
        <p class="hint" id="branding-logo-none">
          No logo: the display name stands alone.
        </p>
      )}
      {canWrite ? (
        <>
          <form
            id="branding-logo-form"
            method="post"
            action={`${path}/logo`}
            enctype="multipart/form-data"
            hx-post={`${path}/logo`}
            hx-encoding="multipart/form-data"
            hx-target="#branding-logo"
            hx-swap="outerHTML"
          >
            <label for="branding-logo-file">Upload a logo</label>
            <input
              id="branding-logo-file"
              type="file"
              name="logo"
              required
              accept="image/png,image/jpeg,image/webp,image/svg+xml"
              aria-invalid={error ? 'true' : undefined}
              aria-describedby="branding-logo-hint"
            />
            <p class="hint" id="branding-logo-hint">
              PNG, JPEG, WebP or SVG, at most 1 MiB. An SVG with scripts, event handlers or external
              references is refused.
            </p>
            <FieldError id="branding-logo-error" message={error} />
            <progress id="branding-logo-progress" max="100" value="0" hidden></progress>
            <p>
              <button class="btn" type="submit">
                Upload logo
              </button>
            </p>
          </form>
          {logoUrl ? (
            <form
              id="branding-logo-remove"
              method="post"
              action={`${path}/logo/remove`}
              hx-post={`${path}/logo/remove`}
              hx-target="#branding-logo"
              hx-swap="outerHTML"
              hx-confirm="Remove the logo? The hosted pages lose it at once."
            >
              <button class="btn danger small" type="submit">
                Remove logo
              </button>
            </form>
          ) : (
            ''
          )}
        </>
      ) : (
        ''
      )}
    </div>
  )
}

/** The page's body: the form and its preview, the contrast warnings, the logo. */
export function BrandingSection({
  workspaceId,
  view,
  canWrite,
  form,
  saved,
}: {
  workspaceId: string
  view: BrandingModel.View
  canWrite: boolean
  form?: FormState<BrandingField>
  saved?: boolean
}) {
  const values = form?.values ?? brandingValues(view)
  return (
    <div id="branding">
      <div class="branding-grid">
        <div class="panel">
          <ContrastWarnings values={values} />
          {canWrite ? (
            <BrandingForm workspaceId={workspaceId} values={values} errors={form?.errors} saved={saved} />
          ) : (
            <Alert kind="warn">
              Branding is changed by members who can change this workspace (developers, admins and owners).
            </Alert>
          )}
        </div>
        <Preview values={values} logoUrl={view.logo_url} />
      </div>
      <LogoPanel workspaceId={workspaceId} logoUrl={view.logo_url} canWrite={canWrite} />
    </div>
  )
}
