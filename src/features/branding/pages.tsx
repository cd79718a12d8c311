import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import { defineForm, type FormField } from '../../shared/forms'
import type { SidebarLink } from '../../shared/views/components'
import { settingsPage } from '../../shared/views/crud'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { BrandingModel } from './model'
import { createBrandingService } from './service'
import { BrandingSection, LogoPanel, PreviewLogo } from './views'

const views = { detail: { tags: ['views'] } }

/** An empty field puts the platform's back (null); anything else is checked as typed, trimmed. */
const clearable: FormField = { read: (raw) => raw.trim() || null }

const brandingForm = defineForm(BrandingModel.update, {
  display_name: clearable,
  primary_color: clearable,
  background_color: clearable,
  text_color: clearable,
  privacy_policy_url: clearable,
  terms_url: clearable,
})

/** The multipart field as sent: the file's bytes, or null when no file came. */
async function uploaded(body: unknown): Promise<Uint8Array | null> {
  const file = (body as Record<string, unknown> | undefined)?.logo
  return file instanceof Blob ? new Uint8Array(await file.arrayBuffer()) : null
}

/** A logo panel and the preview's logo (out of band), after an upload or a removal. */
const logoAnswer = (workspaceId: string, logoUrl: string | null, more: { error?: string; done?: string }) => (
  <>
    <LogoPanel workspaceId={workspaceId} logoUrl={logoUrl} canWrite {...more} />
    <PreviewLogo logoUrl={logoUrl} oob />
  </>
)

/**
 * Settings → Branding: the workspace's look on its hosted pages and in its mails, with a live
 * preview of the sign-in card and a contrast warning; the logo's upload and removal. Members read
 * it; changing it takes `workspace:write`, as on the API.
 */
export function brandingPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createBrandingService(core)
  const path = '/app/workspaces/:workspace_id/settings/branding'
  const settings = settingsPage({
    nav: sidebar,
    here: 'settings/branding',
    heading: 'Branding',
    title: 'branding',
    lead: (
      <>
        Your name, logo and colours on this workspace's sign-in pages and mails, with links to your privacy
        policy and terms.
      </>
    ),
  })

  return new Elysia({ name: 'branding-pages' })
    .use(auth)
    .get(
      path,
      settings.get(async (w: Workspace, scopes) => (
        <BrandingSection
          workspaceId={w.id}
          view={await service.get(w)}
          canWrite={holdsScope(scopes, 'workspace:write')}
        />
      )),
      { params: WorkspaceModel.params, scope: 'workspace:read', ...views },
    )
    .post(
      path,
      async ({ actor, workspace: w, body }) => {
        const sent = await brandingForm.submit(body, (input) => service.update(w, actor, input))
        if (!sent.ok) {
          const form = { values: sent.values, errors: sent.errors }
          return settings.answer(
            false,
            <BrandingSection workspaceId={w.id} view={await service.get(w)} canWrite form={form} />,
          )
        }
        return settings.answer(true, <BrandingSection workspaceId={w.id} view={sent.result} canWrite saved />)
      },
      { params: WorkspaceModel.params, scope: 'workspace:write', ...views },
    )
    .post(
      `${path}/logo`,
      async ({ actor, workspace: w, body }) => {
        const bytes = await uploaded(body)
        if (!bytes) {
          const { logo_url } = await service.get(w)
          return settings.answer(false, logoAnswer(w.id, logo_url, { error: 'Choose an image file.' }))
        }
        try {
          const view = await service.uploadLogo(w, actor, bytes)
          return settings.answer(true, logoAnswer(w.id, view.logo_url, { done: 'Logo uploaded.' }))
        } catch (e) {
          if (!(e instanceof AppError) || e.status !== 422) throw e
          const { logo_url } = await service.get(w)
          return settings.answer(false, logoAnswer(w.id, logo_url, { error: e.message }))
        }
      },
      { params: WorkspaceModel.params, scope: 'workspace:write', ...views },
    )
    .post(
      `${path}/logo/remove`,
      async ({ actor, workspace: w }) => {
        const view = await service.removeLogo(w, actor)
        return settings.answer(true, logoAnswer(w.id, view.logo_url, { done: 'Logo removed.' }))
      },
      { params: WorkspaceModel.params, scope: 'workspace:write', ...views },
    )
}
