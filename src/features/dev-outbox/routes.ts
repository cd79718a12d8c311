import { Elysia } from 'elysia'
import type { Core } from '../../core'
import { isoTime } from '../../shared/clock'
import { devOutboxEnabled, latestDevMails } from '../../shared/mail/mailer'
import { outboxPage } from './page'

const LIMIT = 50

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
  'referrer-policy': 'no-referrer',
}

// A development aid, not part of the API contract.
const notInApiDocs = { detail: { hide: true } }

export const devOutboxRoutes = (core: Core) => {
  const app = new Elysia({ name: 'dev-outbox' })
  if (!devOutboxEnabled(core.config)) return app
  return app
    .get(
      '/dev/outbox',
      () => new Response(outboxPage(latestDevMails(core, LIMIT), LIMIT), { headers: PAGE_HEADERS }),
      notInApiDocs,
    )
    .get(
      '/dev/outbox.json',
      ({ set }) => {
        set.headers['cache-control'] = 'no-store'
        return latestDevMails(core, LIMIT).map((m) => ({
          id: m.id,
          workspace_id: m.workspaceId,
          to: m.to,
          subject: m.subject,
          text: m.text,
          html: m.html,
          created_at: isoTime(m.createdAt),
        }))
      },
      notInApiDocs,
    )
}
