/**
 * The rate limits of test servers: off (0), so only a test about limits (which passes its own
 * `RATE_LIMIT_*`) meets one. Tests turn a ManualClock forward and back, and a limiter bucket
 * stays full until its clock is back where it was (as after a node's skew).
 * Spread before a test's own env.
 */
export const TEST_RATE_LIMITS: Record<string, string> = {
  RATE_LIMIT_WORKSPACE_PER_MINUTE: '0',
  RATE_LIMIT_ORGANISATION_PER_MINUTE: '0',
  RATE_LIMIT_ADDRESS_PER_MINUTE: '0',
  RATE_LIMIT_BATCH_PER_MINUTE: '0',
  RATE_LIMIT_DATA_PLANE_RPS: '0',
}
