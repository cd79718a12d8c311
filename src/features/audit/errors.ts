import { defineErrorCodes } from '../../shared/errors'

/** What the audit log refuses (all 422s, at the query field that broke). */
export const AuditErrors = defineErrorCodes({
  LIMIT_INVALID: 'Use a limit from 1 to 200',
  CURSOR_INVALID: 'This cursor is not one this list handed out',
  ACTOR_INVALID: 'Use an actor of the form user:<account id> or key:<key id>',
  ACTION_INVALID: 'Use an action such as app.created, or a prefix ending in .* such as app.*',
  TIME_INVALID: 'Use an ISO 8601 timestamp such as 2025-01-31T12:00:00Z (or a date, 2025-01-31)',
})
