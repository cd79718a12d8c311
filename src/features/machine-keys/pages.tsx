import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { defineForm, type FormField, formField } from '../../shared/forms'
import type { SidebarLink } from '../../shared/views/components'
import { removeRow, settingsPage } from '../../shared/views/crud'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { MachineKeyModel } from './model'
import { createMachineKeyService, type KeyCaller } from './service'
import { KeysSection } from './views'

const views = { detail: { tags: ['views'] } }

/** One access level chosen in a select: the model's list of scopes. */
const accessField: FormField = { read: (raw) => (raw ? [raw] : []) }
/** A date input (YYYY-MM-DD): the key works through that day (UTC); empty is a key that never expires. */
const dayField: FormField = { read: (raw) => (raw.trim() ? `${raw.trim()}T23:59:59Z` : null) }

/** The form reads into the API's model: the rules and their messages are the API's. */
const createForm = defineForm(MachineKeyModel.create, {
  name: formField.text,
  scopes: accessField,
  expires_at: dayField,
})

/** Settings → Machine keys: the list, creating (the key file shown once), rotating and revoking. */
export function machineKeyPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createMachineKeyService(core)
  const path = '/app/workspaces/:workspace_id/settings/machine-keys'
  const settings = settingsPage({
    nav: sidebar,
    here: 'settings/machine-keys',
    heading: 'Machine keys',
    title: 'machine keys',
    lead: (
      <>
        Credentials for scripts, CI jobs and agents: each exchanges its key for a 15-minute access token to
        this workspace's API. A key does not sign anyone in to your apps.
      </>
    ),
  })

  const section = async (
    w: Workspace,
    caller: KeyCaller,
    extra: Partial<Parameters<typeof KeysSection>[0]> = {},
  ) => (
    <KeysSection
      workspaceId={w.id}
      items={await service.list(w)}
      admin={holdsScope(caller.scopes, 'workspace:admin')}
      {...extra}
    />
  )

  return new Elysia({ name: 'machine-key-pages' })
    .use(auth)
    .get(
      path,
      settings.get(async (w: Workspace, scopes) => (
        <KeysSection
          workspaceId={w.id}
          items={await service.list(w)}
          admin={holdsScope(scopes, 'workspace:admin')}
        />
      )),
      { params: WorkspaceModel.params, scope: 'workspace:read', ...views },
    )
    .post(
      path,
      async ({ principal, actor, scopes, workspace: w, body }) => {
        const caller = { principal, actor, scopes }
        const sent = await createForm.submit(body, (input) => service.create(w, caller, input))
        if (!sent.ok) {
          // The date as typed, not as the model read it.
          const values = { ...sent.values }
          return settings.answer(false, await section(w, caller, { form: { values, errors: sent.errors } }))
        }
        return settings.answer(true, await section(w, caller, { created: sent.result }))
      },
      { params: WorkspaceModel.params, scope: 'workspace:admin', ...views },
    )
    .post(
      `${path}/:key_id/rotate`,
      async ({ principal, actor, scopes, workspace: w, params }) => {
        const caller = { principal, actor, scopes }
        const created = await service.rotate(w, caller, params.key_id)
        return settings.answer(true, await section(w, caller, { created }))
      },
      { params: MachineKeyModel.params, scope: 'workspace:admin', ...views },
    )
    .delete(
      `${path}/:key_id`,
      async ({ principal, actor, scopes, workspace: w, params }) =>
        removeRow(service.revoke(w, { principal, actor, scopes }, params.key_id)),
      { params: MachineKeyModel.params, scope: 'workspace:admin', ...views },
    )
}
