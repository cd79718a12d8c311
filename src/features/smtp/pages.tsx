import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { defineForm, type FormField, formField, sentText } from '../../shared/forms'
import type { SidebarLink } from '../../shared/views/components'
import { settingsPage } from '../../shared/views/crud'
import { routeMail } from '../mail/service'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { SmtpModel } from './model'
import { createSmtpService, testCallerOf } from './service'
import { SmtpSection, SmtpTestForm } from './views'

const views = { detail: { tags: ['views'] } }
const params = WorkspaceModel.params

/** An optional text input: empty leaves the property out. */
const optionalText: FormField = { read: (raw) => raw.trim() || undefined }

/** The form reads into the API's model: the rules and their messages are the API's. */
const smtpForm = defineForm(SmtpModel.update, {
  host: formField.text,
  port: formField.integer,
  username: optionalText,
  // As typed: a password is the server's, spaces and all; empty keeps the current one.
  password: { read: (raw) => raw || undefined },
  security: formField.choice,
  from_address: formField.text,
  from_name: optionalText,
})

const testForm = defineForm(SmtpModel.test, { to: formField.text })

/**
 * Settings → SMTP (SPEC "Dashboard routes"): the server in effect and how its last mails went;
 * for admins, the form (save), a test mail with the server's answer, and the way back to the
 * platform's server (revert, as the JSON DELETE). Scopes as on the API.
 */
export function smtpPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createSmtpService(core)
  const path = '/app/workspaces/:workspace_id/settings/smtp'

  /** What the page's body shows the caller: the server in effect, and whether they may change it. */
  const sectionOf = async (w: Workspace, scopes: readonly string[]) => ({
    workspaceId: w.id,
    ...(await service.status(w)),
    via: (await routeMail(core, w.id)).via,
    canAdmin: holdsScope(scopes, 'workspace:admin'),
  })
  const settings = settingsPage({
    nav: sidebar,
    here: 'settings/smtp',
    heading: 'SMTP',
    lead: (
      <>
        The mail server that sends this workspace's mail: invitations, email verification and password resets.
      </>
    ),
  })

  return new Elysia({ name: 'smtp-pages' })
    .use(auth)
    .get(
      path,
      settings.get(async (w: Workspace, scopes) => <SmtpSection {...(await sectionOf(w, scopes))} />),
      { params, scope: 'workspace:read', ...views },
    )
    .post(
      path,
      async ({ actor, scopes, workspace: w, body }) => {
        const sent = await smtpForm.submit(body, (input) => service.replace(w, actor, input))
        if (!sent.ok) {
          // What was typed comes back, but never the password.
          const form = { values: { ...sent.values, password: '' }, errors: sent.errors }
          return settings.answer(false, <SmtpSection {...(await sectionOf(w, scopes))} form={form} />)
        }
        return settings.answer(true, <SmtpSection {...(await sectionOf(w, scopes))} saved />)
      },
      { params, scope: 'workspace:admin', ...views },
    )
    .post(
      `${path}/revert`,
      async ({ actor, scopes, workspace: w }) => {
        await service.revert(w, actor)
        return settings.answer(true, <SmtpSection {...(await sectionOf(w, scopes))} reverted />)
      },
      { params, scope: 'workspace:admin', ...views },
    )
    .post(
      `${path}/test`,
      async ({ workspace: w, principal, body }) => {
        const to = sentText(body, 'to')
        const sent = await testForm.submit(body, (input) =>
          service.test(w, testCallerOf(principal), input.to),
        )
        if (!sent.ok)
          return settings.answer(
            false,
            <SmtpTestForm workspaceId={w.id} to={sent.values.to} error={sent.errors.to} />,
          )
        return settings.answer(true, <SmtpTestForm workspaceId={w.id} to={to} result={sent.result} />)
      },
      { params, scope: 'workspace:admin', ...views },
    )
}
