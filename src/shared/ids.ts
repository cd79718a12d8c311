import { monotonicFactory } from 'ulid'

const ulid = monotonicFactory()

/** Workspaces are addressed by uuid (SPEC: `{workspace_id}` is format uuid). */
export const newWorkspaceId = (): string => crypto.randomUUID()

type IdPrefix =
  | 'evt'
  | 'job'
  | 'app'
  | 'usr'
  | 'key'
  | 'wh'
  | 'att'
  | 'dlv'
  | 'inv'
  | 'idp'
  | 'ten'
  | 'ses'
  | 'aud'
  | 'mail'
  | 'mk'
  | 'smtp'

/** Prefixed, time-sortable ids such as `evt_01J…` (ULID, Crockford base32). */
export const newId = (prefix: IdPrefix, now: number = Date.now()): string => `${prefix}_${ulid(now)}`
