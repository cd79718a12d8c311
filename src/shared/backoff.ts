/**
 * SPEC "Limits", client guidance: after a 429 (or a 503), wait 1, 2, 4, 8 … seconds, at most 30,
 * each with ±20% random jitter, or what `Retry-After` says when it says longer. One helper for
 * every client of the API this project ships (the CLI, the MCP server).
 */
export function backoffDelayMs(
  attempt: number,
  retryAfterSeconds?: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(30_000, 1000 * 2 ** Math.max(0, attempt))
  const jittered = Math.round(base * (0.8 + 0.4 * random()))
  return Math.max(jittered, (retryAfterSeconds ?? 0) * 1000)
}

/**
 * Runs `call` until it answers something other than 429 or 503, waiting `backoffDelayMs` between
 * tries (`attempts` in all); the last answer is returned whatever it is.
 */
export async function withBackoff(
  call: () => Promise<Response>,
  {
    attempts = 6,
    sleep = (ms: number) => Bun.sleep(ms),
  }: { attempts?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await call()
    if ((res.status !== 429 && res.status !== 503) || attempt + 1 >= attempts) return res
    const retryAfter = Number(res.headers.get('retry-after'))
    await sleep(backoffDelayMs(attempt, Number.isFinite(retryAfter) ? retryAfter : undefined))
  }
}
