import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { AppError, appError } from '../../shared/errors'
import { defineForm, type FormField, formField } from '../../shared/forms'
import type { SidebarLink } from '../../shared/views/components'
import { settingsPage } from '../../shared/views/crud'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { IdpErrors } from './errors'
import { IdpModel } from './model'
import { createIdpService, redirectUriOf } from './service'
import { IdpList, IdpsSection } from './views'

const views = { detail: { tags: ['views'] } }

/** An optional text input: empty leaves the property out, and the service's default applies. */
const optionalText: FormField = { read: (raw) => raw.trim() || undefined }

/** Scopes typed on one line, separated by spaces; a repeated one counts once; none is the type's defaults. */
const scopesField: FormField = {
  read: (raw) => {
    const scopes = [...new Set(raw.split(/\s+/).filter(Boolean))]
    return scopes.length ? scopes : undefined
  },
  item: (index) => `Scope ${index + 1}: `,
}

/** The form reads into the API's model: the rules and their messages are the API's. */
const createForm = defineForm(IdpModel.create, {
  type: formField.choice,
  name: optionalText,
  client_id: formField.text,
  // As typed: a secret is the provider's, spaces and all.
  client_secret: { read: (raw) => raw },
  issuer: optionalText,
  scopes: scopesField,
  trust_email: formField.checkbox,
  trust_mfa: formField.checkbox,
})

/** The cap on IdPs (a 409 on the API) is said on the form, next to the provider choice, keeping what was typed. */
const atTheForm = (e: unknown) => {
  if (e instanceof AppError && e.code === IdpErrors.TOO_MANY_IDPS.code)
    throw appError(IdpErrors.TOO_MANY_IDPS, 422, { loc: ['body', 'type'] })
  throw e
}

/**
 * Settings → Identity providers: a workspace's Google, GitHub, Microsoft and OpenID Connect
 * providers with the redirect URI each needs registered, adding one and deleting one. Members read
 * the list; adding and deleting take `workspace:write`, as on the API, and trusting an IdP's
 * addresses or second factors `workspace:admin` (the form offers it to admins alone).
 */
export function idpPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createIdpService(core)
  const path = '/app/workspaces/:workspace_id/settings/idps'

  /** What the page's body shows the caller: the list, and whether they may change it. */
  const sectionOf = async (w: Workspace, scopes: readonly string[]) => ({
    workspaceId: w.id,
    redirectUri: redirectUriOf(core, w.id),
    items: (await service.list(w)).items,
    canWrite: holdsScope(scopes, 'workspace:write'),
    canTrust: holdsScope(scopes, 'workspace:admin'),
  })
  const settings = settingsPage({
    nav: sidebar,
    here: 'settings/idps',
    heading: 'Identity providers',
    title: 'identity providers',
    lead: (
      <>
        Let users sign in to this workspace's apps with an account they already have: Google, GitHub,
        Microsoft, or any OpenID Connect provider.
      </>
    ),
  })

  return new Elysia({ name: 'idp-pages' })
    .use(auth)
    .get(
      path,
      settings.get(async (w: Workspace, scopes) => <IdpsSection {...(await sectionOf(w, scopes))} />),
      { params: WorkspaceModel.params, scope: 'workspace:read', ...views },
    )
    .post(
      path,
      async ({ actor, scopes, workspace: w, body }) => {
        const sent = await createForm.submit(body, (input) =>
          service.create(w, { actor, scopes }, input).catch(atTheForm),
        )
        if (!sent.ok) {
          // What was typed comes back, but never the secret.
          const values = { ...sent.values, client_secret: '' }
          const form = { values, errors: sent.errors }
          return settings.answer(false, <IdpsSection {...(await sectionOf(w, scopes))} form={form} />)
        }
        return settings.answer(true, <IdpsSection {...(await sectionOf(w, scopes))} created={sent.result} />)
      },
      { params: WorkspaceModel.params, scope: 'workspace:write', ...views },
    )
    .delete(
      `${path}/:idp_id`,
      async ({ actor, workspace: w, params }) => {
        await service.remove(w, actor, params.idp_id)
        // The list again (`#idp-list`), so a form being filled in beside it stays as it is.
        const { items } = await service.list(w)
        return settings.answer(true, <IdpList workspaceId={w.id} items={items} canWrite />)
      },
      { params: IdpModel.params, scope: 'workspace:write', ...views },
    )
}
