import { edenGC } from 'bun:jsc'

/**
 * Requests between two young-generation (eden) collections the front door asks for. A cached
 * discovery or JWKS answer allocates ~2.5 KiB, so 4,000 of them keep the young generation near 10 MiB.
 * An eden's pause hardly depends on how much was allocated since the last (BUN_JSC_logGC in a node
 * under a discovery load: 1.23 ms median every 2,000 requests, 1.27 every 4,000, 1.34 every 8,000;
 * each marks only ~20-40 KiB, the rest is per-block work over the whole heap of 30-90 MiB), so the
 * pace sets its cost per request: 4,000 measured 1.030 of 2,000's rate (alternate.ts, 16 pairs,
 * 0.48 µs less CPU per request), 8,000 only 1.009 of 4,000's for twice the young generation.
 * A token request allocates far more: under a token load JavaScriptCore collects on its own about every
 * 800 tokens, and this pace adds one collection to about every 5 of those (0.997 of 2,000's rate).
 */
const REQUESTS_PER_EDEN = 4_000

/**
 * Keeps the JavaScript heap's young generation small while requests come in: every `every`
 * requests, one eden collection. It marks the young objects the roots reach, not the whole heap: a
 * pause of ~1.3 ms (median) in a node, as long as the collections JavaScriptCore runs on its own,
 * ~0.3 µs per request at this pace against the ~4.5 µs it saves.
 *
 * Why: JavaScriptCore lets the young generation grow in proportion to the live heap. A node's live
 * heap (the features, oidc-provider, Elysia, ~23 MiB) lets it reach ~38 MiB between collections,
 * where a bare `Bun.serve` process, nearly empty, collects every ~7 MiB. Requests then allocate in
 * memory that is cold: the allocator's freed pages are returned to the system and faulted in again
 * (page faults per request 5x), and caches miss. The same cached-answer handler, 5 rounds of
 * `npm run bench -- cached-answer-floor` (scripts/bench/scenarios/cached-answer-floor.ts): in an empty process 17.6 µs of CPU per request (0.82 of
 * bare's rate), in a process running a whole node 23.1 µs (0.74), and there with an eden collection
 * every 2,000 requests 18.6 µs (0.84).
 */
export function gcPacer(every: number = REQUESTS_PER_EDEN, collect: () => unknown = edenGC): () => void {
  let count = 0
  return () => {
    if (++count < every) return
    count = 0
    collect()
  }
}

/**
 * How long a node (or a job thread) must have been idle, after a burst of work, before it runs one
 * full collection (`idleCollector`): between one and two of these.
 */
const IDLE_MS = 1_000

/** Requests (or jobs) since the last full collection below which an idle spell collects nothing. */
const BURST = 100

/**
 * One full collection once a burst of work is over: the returned function marks work (`n` requests
 * or jobs); when a whole `idleMs` then passes without any, after at least `burst` since the last
 * one, `collect` runs, and nothing more until work comes again.
 *
 * Why: JavaScriptCore's own collections run on allocation, so a node that goes quiet keeps the heap
 * it grew under load, garbage and all, and the allocator keeps its pages. After creating 500
 * workspaces through the API a node's RSS settled 16 MiB higher than after one full collection
 * (176 against 160 MiB), and creating 500 more added 12 MiB against 2: what the control plane, the
 * provisioning jobs and a cold instance's load leave is garbage, not state. An idle node pays for the
 * pause (tens of ms with 10,000 instances held) when no request waits for it; a node that never
 * idles leaves its collections to JavaScriptCore, and a trickle of requests gets at most one per
 * `burst` of them.
 */
export function idleCollector(
  idleMs: number = IDLE_MS,
  collect: () => unknown = () => Bun.gc(true),
  burst: number = BURST,
): (n?: number) => void {
  let worked = 0
  let busy = false
  let timer: ReturnType<typeof setInterval> | undefined
  const check = () => {
    if (busy) {
      busy = false
      return
    }
    clearInterval(timer)
    timer = undefined
    if (worked < burst) return
    worked = 0
    collect()
  }
  return (n = 1) => {
    worked += n
    busy = true
    if (timer !== undefined) return
    timer = setInterval(check, idleMs)
    // Never what keeps a process (or a test) alive.
    timer.unref()
  }
}
