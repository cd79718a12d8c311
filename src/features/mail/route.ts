import type { Core } from '../../core'
import { activeProvider, type SmtpProvider } from '../smtp/service'

/**
 * Where a mail leaves by: the workspace's own SMTP server, the platform's (SMTP_URL), the dev
 * outbox, or `none` (it is dropped).
 */
export type MailRoute =
  | { via: 'workspace'; provider: SmtpProvider }
  | { via: 'platform'; smtpUrl: string }
  | { via: 'outbox' }
  | { via: 'none' }

/**
 * How mail of a workspace (null: the platform's own, such as its sign-up verification) leaves
 * now: through the workspace's active SMTP provider, else the platform's SMTP_URL, else the dev
 * outbox when it is on, else nowhere. The one place that decides: delivery sends by it, and every
 * page that says a mail was "queued" or "not sent" asks it.
 */
export async function mailRoute(core: Core, workspaceId: string | null | undefined): Promise<MailRoute> {
  const provider = workspaceId ? await activeProvider(core, workspaceId) : undefined
  if (provider) return { via: 'workspace', provider }
  if (core.config.smtpUrl) return { via: 'platform', smtpUrl: core.config.smtpUrl }
  return core.config.devOutbox ? { via: 'outbox' } : { via: 'none' }
}
