import type { Core } from '../core'
import { mailSend } from './kinds/mail-send'
import { purgeExpired } from './kinds/maintenance'
import { workspaceProvision, workspaceTeardown } from './kinds/workspace'
import type { JobHandler } from './runner'

export type CoreJobHandler = JobHandler<Core, never>

/** Every job kind the product runs. Each handler calls into a feature service. */
export const jobHandlers: CoreJobHandler[] = [
  mailSend,
  purgeExpired,
  workspaceProvision,
  workspaceTeardown,
] as CoreJobHandler[]
