import type { Feature } from '../feature'
import { mailSend } from './jobs'
import { deleteWorkspaceMail, purgeExpiredMail } from './outbox'
import { devOutboxRoutes } from './routes'
import { mailLeaves, sendMail } from './service'

/** The one mail path (a durable job per mail), and the development outbox when no SMTP is set. */
export const feature: Feature = {
  name: 'mail',
  pages: ({ core, auth }) => devOutboxRoutes(core, auth),
  teardown: deleteWorkspaceMail,
  purges: [purgeExpiredMail],
  jobs: () => [mailSend],
  identity: (core) => ({
    mail: { send: sendMail, leaves: (workspaceId) => mailLeaves(core, workspaceId) },
  }),
}
