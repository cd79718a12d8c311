// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { gcPacer } from './gc-pacing'

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
