/**
 * How writers tell this thread's in-memory views of an identity instance (its Provider, cached
 * discovery and JWKS, memoized state and clients) that the rows behind them changed. Services call
 * `changed` after committing; the identity plane subscribes. Each thread has its own (job workers
 * hold no such views), and those views also expire on their own, so a write made by another thread
 * is seen within seconds.
 */
export class InstanceChanges {
  private readonly listeners: ((instanceId: string) => void)[] = []

  subscribe(listener: (instanceId: string) => void): void {
    this.listeners.push(listener)
  }

  changed(instanceId: string): void {
    for (const listener of this.listeners) listener(instanceId)
  }
}
