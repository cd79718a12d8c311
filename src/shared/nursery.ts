import { edenGC } from 'bun:jsc'

/**
 * Requests between two young-generation (eden) collections the front door asks for. A cached
 * discovery or JWKS answer allocates ~2.5 KiB, so 2,000 of them keep the young generation near 5 MiB.
 * A token request allocates far more: under a token load JavaScriptCore collects on its own about every
 * 800 tokens, and this pace adds one collection to about every 2.5 of those (no change in the rate).
 */
export const REQUESTS_PER_EDEN = 2_000

/**
 * Keeps the JavaScript heap's young generation small while requests come in: every `every`
 * requests, one eden collection. It visits the young objects and the roots, not the whole heap: a
 * pause of ~1.4 ms (median; p95 2.1 ms) in a node, as long as the collections JavaScriptCore runs on
 * its own, ~0.7 µs per request at this pace against the ~4.5 µs it saves.
 *
 * Why: JavaScriptCore lets the young generation grow in proportion to the live heap. A node's live
 * heap (the features, oidc-provider, Elysia, ~23 MiB) lets it reach ~38 MiB between collections,
 * where a bare `Bun.serve` process, nearly empty, collects every ~7 MiB. Requests then allocate in
 * memory that is cold: the allocator's freed pages are returned to the system and faulted in again
 * (page faults per request 5x), and caches miss. The same cached-answer handler, 5 rounds of
 * scripts/bench/cached-answer-floor.ts: in an empty process 17.6 µs of CPU per request (0.82 of
 * bare's rate), in a process running a whole node 23.1 µs (0.74), and there with an eden collection
 * every 2,000 requests 18.6 µs (0.84).
 */
export function nurseryPacer(every: number = REQUESTS_PER_EDEN, collect: () => unknown = edenGC): () => void {
  let count = 0
  return () => {
    if (++count < every) return
    count = 0
    collect()
  }
}
