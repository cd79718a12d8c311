import type { Store } from '../db/store'

/** The cluster's channel (DESIGN "Scale-out"). */
const CHANNEL = 'gatehouse_changes'

/** A listener gets the instance whose rows changed, or null: anything may have changed. */
export type InstanceListener = (instanceId: string | null) => void

/**
 * How writers tell the in-memory views of an identity instance (its loaded keys and settings, cached discovery and
 * JWKS, memoized state and clients) that the rows behind them changed, on every node. Services call
 * `changed` after committing; the identity plane subscribes. On PostgreSQL the change also goes out
 * through NOTIFY to every node, which `listen` receives (the main thread of each node); on SQLite
 * there is one node. The views also expire on their own: the backstop for a message lost.
 */
export class InstanceChanges {
  private readonly listeners: InstanceListener[] = []

  constructor(private readonly store: Pick<Store, 'dialect' | 'notify' | 'listen'>) {}

  subscribe(listener: InstanceListener): void {
    this.listeners.push(listener)
  }

  async changed(instanceId: string): Promise<void> {
    this.local(instanceId)
    if (this.store.dialect === 'postgres') await this.store.notify(CHANNEL, instanceId)
  }

  /**
   * Receives the other nodes' changes. When the listening connection was lost and came back, the
   * messages sent meanwhile are gone: every view is dropped.
   */
  listen(): Promise<void> {
    return this.store.listen(
      CHANNEL,
      (instanceId) => this.local(instanceId),
      () => this.local(null),
    )
  }

  private local(instanceId: string | null): void {
    for (const listener of this.listeners) listener(instanceId)
  }
}
