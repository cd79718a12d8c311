import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Principal } from '../../access/model'
import type { Core } from '../../core'
import { isoTime } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { html } from '../../shared/views/respond'
import type { Workspace } from '../workspaces/service'
import { latestDevMails } from './outbox'
import { outboxPage } from './outbox-page'
import { isAdminSession } from './service'

const LIMIT = 50

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
  'referrer-policy': 'no-referrer',
}

// A development aid, not part of the API contract.
const notInApiDocs = { detail: { hide: true } }

/**
 * The outbox shows working reset and verification links: only the platform administrator's
 * dashboard session may read it. Anyone else signed in gets 404, as if it did not exist.
 */
function requireAdminSession(principal: Principal): void {
  if (!isAdminSession(principal)) {
    throw new AppError('NOT_FOUND', 404, 'Not Found')
  }
}

/** Served only when config.devOutbox is on (DEV_OUTBOX, or a loopback-only install without SMTP). */
export const devOutboxRoutes = (core: Core, auth: AuthPlugin<Workspace>) => {
  const app = new Elysia({ name: 'dev-outbox' })
  if (!core.config.devOutbox) return app
  return app
    .use(auth)
    .get(
      '/dev/outbox',
      async ({ request, cookie, principalOf, redirect }) => {
        const principal = await principalOf({ request, cookie, body: null })
        // A page a person opens: signed out, they sign in and come back here.
        if (!principal) return redirect(`/v1/auth/login?next=${encodeURIComponent('/dev/outbox')}`, 303)
        requireAdminSession(principal)
        return html(outboxPage(await latestDevMails(core, LIMIT), LIMIT), 200, PAGE_HEADERS)
      },
      notInApiDocs,
    )
    .get(
      '/dev/outbox.json',
      async ({ principal, set }) => {
        requireAdminSession(principal)
        set.headers['cache-control'] = 'no-store'
        return (await latestDevMails(core, LIMIT)).map((m) => ({
          id: m.id,
          workspace_id: m.workspaceId,
          to: m.to,
          subject: m.subject,
          text: m.text,
          html: m.html,
          created_at: isoTime(m.createdAt),
        }))
      },
      { auth: true, ...notInApiDocs },
    )
}
