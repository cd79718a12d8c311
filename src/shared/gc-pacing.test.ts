// legs: once — unit test; no store

import { describe, expect, it } from 'bun:test'
import { gcPacer, idleCollector } from './gc-pacing'

describe('gcPacer', () => {
  it('collects once every `every` requests, not before', () => {
    let collections = 0
    const pace = gcPacer(3, () => collections++)
    const seen: number[] = []
    for (let i = 0; i < 7; i++) {
      pace()
      seen.push(collections)
    }
    expect(seen).toEqual([0, 0, 1, 1, 1, 2, 2])
  })

  it("runs JavaScriptCore's eden collection by default: young garbage is collected", async () => {
    // Short-lived objects, as a request's are, seen only through weak references (made in a
    // function of their own, so that no pointer to them stays on this stack).
    const young = () => Array.from({ length: 100 }, (_, i) => new WeakRef({ i, s: `x${i}` }))
    const refs = young()
    // A WeakRef holds its target until the job that made it ends.
    await Bun.sleep(0)
    gcPacer(1)()
    // Not one left, or a stale pointer on the stack (collection is conservative there) at most.
    expect(refs.filter((r) => r.deref() !== undefined).length).toBeLessThanOrEqual(1)
  })
})

describe('idleCollector', () => {
  it('collects once when a burst of work is followed by a whole idle period, not while work goes on', async () => {
    let collections = 0
    const work = idleCollector(300, () => collections++, 10)
    work(10)
    for (let i = 0; i < 8; i++) {
      await Bun.sleep(50)
      work()
    }
    expect(collections).toBe(0)
    await Bun.sleep(700)
    expect(collections).toBe(1)
    await Bun.sleep(700)
    expect(collections).toBe(1)
  })

  it('leaves a trickle of work alone until it adds up to a burst', async () => {
    let collections = 0
    const work = idleCollector(20, () => collections++, 3)
    work()
    await Bun.sleep(100)
    work()
    await Bun.sleep(100)
    expect(collections).toBe(0)
    work()
    await Bun.sleep(100)
    expect(collections).toBe(1)
  })

  it('collects by default (a full collection): garbage is collected once the work stops', async () => {
    const garbage = () => Array.from({ length: 100 }, (_, i) => new WeakRef({ i, s: `x${i}` }))
    const refs = garbage()
    await Bun.sleep(0)
    idleCollector(10, undefined, 1)()
    await Bun.sleep(60)
    expect(refs.filter((r) => r.deref() !== undefined).length).toBeLessThanOrEqual(1)
  })
})
