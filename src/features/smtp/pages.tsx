import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { defineForm, type FormField, formField, sentText } from '../../shared/forms'
import { type SidebarLink, WorkspacePage } from '../../shared/views/components'
import { html, shellUser } from '../../shared/views/respond'
import { routeMail } from '../mail/service'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { SmtpModel } from './model'
import { createSmtpService, testCallerOf } from './service'
import { SmtpSection, SmtpTestForm } from './views'

const views = { detail: { tags: ['views'] } }
const noStore = { 'cache-control': 'no-store' }
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

  return new Elysia({ name: 'smtp-pages' })
    .use(auth)
    .get(
      path,
      async ({ principal, scopes, workspace: w }) =>
        html(
          <WorkspacePage
            nav={sidebar}
            here="settings/smtp"
            w={w}
            user={shellUser(principal)}
            heading="SMTP"
            lead={
              <>
                The mail server that sends this workspace's mail: invitations, email verification and password
                resets.
              </>
            }
          >
            <SmtpSection {...(await sectionOf(w, scopes))} />
          </WorkspacePage>,
          200,
          noStore,
        ),
      { params, scope: 'workspace:read', ...views },
    )
    .post(
      path,
      async ({ actor, scopes, workspace: w, body }) => {
        const sent = await smtpForm.submit(body, (input) => service.replace(w, actor, input))
        if (!sent.ok) {
          // What was typed comes back, but never the password.
          const form = { values: { ...sent.values, password: '' }, errors: sent.errors }
          return html(<SmtpSection {...(await sectionOf(w, scopes))} form={form} />, 422, noStore)
        }
        return html(<SmtpSection {...(await sectionOf(w, scopes))} saved />, 200, noStore)
      },
      { params, scope: 'workspace:admin', ...views },
    )
    .post(
      `${path}/revert`,
      async ({ actor, scopes, workspace: w }) => {
        await service.revert(w, actor)
        return html(<SmtpSection {...(await sectionOf(w, scopes))} reverted />, 200, noStore)
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
          return html(
            <SmtpTestForm workspaceId={w.id} to={sent.values.to} error={sent.errors.to} />,
            422,
            noStore,
          )
        return html(<SmtpTestForm workspaceId={w.id} to={to} result={sent.result} />, 200, noStore)
      },
      { params, scope: 'workspace:admin', ...views },
    )
}
