import type { Store } from '../db/store'

/** The cluster's channel (DESIGN "Scale-out"). */
const CHANNEL = 'gatehouse_changes'

/** A listener gets the instance whose rows changed, or null: anything may have changed. */
type InstanceListener = (instanceId: string | null) => void

/**
 * How writers tell the in-memory views of an identity instance (its loaded keys and settings, cached
 * discovery and JWKS, memoized state and clients) that the rows behind them changed, wherever they
 * run. Services call `changed` after committing, in any thread; the identity plane subscribes (the
 * main thread of each node, `listen`). On PostgreSQL the change goes out through NOTIFY to every
 * node; on SQLite (one node) through a BroadcastChannel of the store's DATA_DIR to the main thread,
 * from the job worker threads too. The views also expire on their own: the backstop for a message
 * lost, or a row changed by hand.
 */
export class InstanceChanges {
  private readonly listeners: InstanceListener[] = []
  private channel: BroadcastChannel | null = null

  constructor(
    private readonly store: Pick<Store, 'dialect' | 'notify' | 'listen'>,
    /** What names the SQLite store (its DATA_DIR): the threads of one server share its channel. */
    private readonly storeName: string,
  ) {}

  /** This thread's end of the SQLite store's channel; it never keeps the thread alive. */
  private threads(): BroadcastChannel {
    if (!this.channel) {
      this.channel = new BroadcastChannel(`${CHANNEL}:${this.storeName}`)
      // Bun's (and Node's) channel has unref(); the DOM typings do not know it.
      ;(this.channel as BroadcastChannel & { unref(): void }).unref()
    }
    return this.channel
  }

  subscribe(listener: InstanceListener): void {
    this.listeners.push(listener)
  }

  async changed(instanceId: string): Promise<void> {
    this.local(instanceId)
    if (this.store.dialect === 'postgres') await this.store.notify(CHANNEL, instanceId)
    // A channel's own messages do not come back to it: this thread's listeners heard it above.
    else this.threads().postMessage(instanceId)
  }

  /**
   * Receives the changes made elsewhere: by the other nodes (PostgreSQL), or by this node's other
   * threads (SQLite). When PostgreSQL's listening connection was lost and came back, the messages
   * sent meanwhile are gone: every view is dropped.
   */
  listen(): Promise<void> {
    if (this.store.dialect === 'sqlite') {
      this.threads().onmessage = (e: MessageEvent) => this.local(String(e.data))
      return Promise.resolve()
    }
    return this.store.listen(
      CHANNEL,
      (instanceId) => this.local(instanceId),
      () => this.local(null),
    )
  }

  /** Stops receiving (the server stops; its store closes next). */
  close(): void {
    this.channel?.close()
    this.channel = null
  }

  private local(instanceId: string | null): void {
    for (const listener of this.listeners) listener(instanceId)
  }
}
