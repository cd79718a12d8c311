/** What one check of a bucket decided, with what the `X-RateLimit-*` and `Retry-After` headers say. */
export interface Decision {
  allowed: boolean
  /** What the limit is of, as a refusal names it: `workspace`, `client address`, `instance`, … */
  name: string
  /** The bucket's limit: requests per its period (per second for the data plane). */
  limit: number
  /** Requests left now (0 when refused). */
  remaining: number
  /** Unix seconds when the bucket is full again (`X-RateLimit-Reset`). */
  resetAt: number
  /** Whole seconds until one more request is allowed (`Retry-After`); 0 when allowed. */
  retryAfter: number
}

/** Whole seconds a refused take says to wait (`Retry-After`), or 0 when every bucket allowed it. */
export const waitOf = (decisions: readonly Decision[]) => decisions.find((d) => !d.allowed)?.retryAfter ?? 0
