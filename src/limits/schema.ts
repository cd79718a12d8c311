import { epochMs, table, text } from '../db/columns'

/**
 * The rate limiter's buckets (GCRA, one row per bucket): `tat` is the bucket's theoretical arrival
 * time, the moment it would be empty again. A row whose `tat` has passed holds nothing and is purged.
 */
export const rateLimits = table('rate_limits', {
  key: text('key').primaryKey(),
  tat: epochMs('tat').notNull(),
})
