import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { SmtpModel } from './model'
import { createSmtpService, testCallerOf } from './service'

const tags = ['smtp']

/**
 * SPEC "SMTP and branding": a workspace's own mail server. Reading takes `workspace:read`;
 * changing and testing it `workspace:admin`, like the login policy: whoever picks the server reads
 * every sign-in and reset link the workspace mails.
 */
export function smtpRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createSmtpService(core)
  const params = WorkspaceModel.params
  return new Elysia({ name: 'smtp-routes', prefix: '/v1/workspaces/:workspace_id/smtp' })
    .use(auth)
    .get('/', ({ workspace }) => service.get(workspace), {
      params,
      scope: 'workspace:read',
      response: SmtpModel.view,
      detail: { tags, summary: 'The mail server in effect (never its password)' },
    })
    .put('/', ({ workspace, actor, body }) => service.replace(workspace, actor, body), {
      params,
      body: SmtpModel.update,
      scope: 'workspace:admin',
      response: SmtpModel.view,
      detail: {
        tags,
        summary: "Use the workspace's own mail server",
        description:
          'Creates the new provider, makes it the active one, then deletes the custom providers it replaces. Every mail of the workspace goes through it from then on.',
      },
    })
    .delete('/', ({ workspace, actor }) => service.revert(workspace, actor), {
      params,
      scope: 'workspace:admin',
      response: SmtpModel.view,
      detail: { tags, summary: "Back to the platform's mail server (custom providers deleted)" },
    })
    .post(
      '/test',
      ({ workspace, principal, body }) => service.test(workspace, testCallerOf(principal), body.to),
      {
        params,
        body: SmtpModel.test,
        scope: 'workspace:admin',
        response: SmtpModel.tested,
        detail: {
          tags,
          summary: 'Send a test mail now through the mail server in effect',
          description:
            "Through the platform's server (no custom provider) only to the caller's own verified address, so never for a machine key (422 at `to` otherwise); through the workspace's own server to any address. Answers 200 either way: `ok` with the server's reply, or the kind of failure (`timeout`, `tls`, `auth`, `refused`, `rejected`, `blocked` by the outbound guard, `not_configured`) and what happened.",
        },
      },
    )
}
