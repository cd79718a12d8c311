import type { LogFields, Logger } from './logger'

/**
 * At most this many warnings are kept: what a warning names may come from requests (a peer's
 * address), and neither the log nor /healthz is for a client to fill.
 */
const KEPT = 5

/**
 * What a node noticed of its own set-up that its operator should fix (a proxy missing from
 * TRUSTED_PROXIES): each said once as a warn line, and listed in /healthz `warnings` while the
 * process runs. Per node: on PostgreSQL each node sees its own peers.
 */
export class NodeWarnings {
  readonly #said = new Set<string>()

  constructor(private readonly log: Logger) {}

  /** Logs `message` (with `fields`) and lists it, unless it was said already. */
  say(message: string, fields?: LogFields): void {
    if (this.#said.has(message) || this.#said.size >= KEPT) return
    this.#said.add(message)
    this.log.warn(message, fields)
  }

  list(): string[] {
    return [...this.#said]
  }
}
