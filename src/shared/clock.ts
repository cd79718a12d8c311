/** Time source injected everywhere, so tests move time instead of sleeping. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock for tests: starts at `start` and moves only when told. */
export class ManualClock implements Clock {
  constructor(private ms = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.ms
  }
  advance(ms: number) {
    this.ms += ms
  }
  set(ms: number) {
    this.ms = ms
  }
}

export const isoTime = (ms: number) => new Date(ms).toISOString()
