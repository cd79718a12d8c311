// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { coalesced, gathered } from './read-batching'

describe('gathered reads', () => {
  it('makes the reads asked within the wait one read, each answered with its own value', async () => {
    const batches: (readonly string[])[] = []
    const read = gathered(async (keys: readonly string[]) => {
      batches.push(keys)
      return keys.map((k) => k.toUpperCase())
    }, 20)
    const first = [read('a'), read('b'), read('c')]
    expect(batches).toEqual([])
    expect(await Promise.all(first)).toEqual(['A', 'B', 'C'])
    expect(batches).toEqual([['a', 'b', 'c']])
    // The next ones are another read.
    expect(await Promise.all([read('d'), read('e')])).toEqual(['D', 'E'])
    expect(batches).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ])
  })

  it('reads a full gathering at once, without waiting', async () => {
    const batches: (readonly number[])[] = []
    // A wait no test outlives: only the size can start this read.
    const read = gathered(
      async (keys: readonly number[]) => {
        batches.push(keys)
        return keys.map((k) => k * 2)
      },
      60_000,
      3,
    )
    expect(await Promise.all([read(1), read(2), read(3)])).toEqual([2, 4, 6])
    expect(batches).toEqual([[1, 2, 3]])
  })

  it('fails every read of a failed one, and reads again afterwards', async () => {
    let fail = true
    const read = gathered(async (keys: readonly string[]) => {
      if (fail) throw new Error('the store is out of reach')
      return keys.map(() => 'ok')
    }, 1)
    const answers = await Promise.allSettled([read('a'), read('b')])
    expect(answers.map((a) => a.status)).toEqual(['rejected', 'rejected'])
    fail = false
    expect(await read('a')).toBe('ok')
  })
})

describe('coalesced reads', () => {
  /** A read of many whose answers the test lets out one read at a time. */
  function heldReads() {
    const batches: (readonly string[])[] = []
    const pending: { keys: readonly string[]; answer: () => void; fail: (e: Error) => void }[] = []
    const read = coalesced(
      (keys: readonly string[]) =>
        new Promise<string[]>((resolve, reject) => {
          batches.push(keys)
          pending.push({ keys, answer: () => resolve(keys.map((k) => k.toUpperCase())), fail: reject })
        }),
    )
    /** Lets the oldest read under way answer, then lets the next one start. */
    const release = async (how: 'answer' | 'fail' = 'answer') => {
      const p = pending.shift()!
      if (how === 'answer') p.answer()
      else p.fail(new Error('the store is out of reach'))
      await Bun.sleep(0)
    }
    return { read, batches, release }
  }

  it('reads a key alone at once when no read is under way, without a timer', async () => {
    const { read, batches, release } = heldReads()
    const a = read('a')
    await Bun.sleep(0)
    expect(batches).toEqual([['a']])
    await release()
    expect(await a).toBe('A')
  })

  it('reads the keys asked while one read is under way as one read, once it came back', async () => {
    const { read, batches, release } = heldReads()
    const a = read('a')
    await Bun.sleep(0)
    const rest = [read('b'), read('c'), read('d')]
    await Bun.sleep(0)
    // Nothing more starts while the first read is under way.
    expect(batches).toEqual([['a']])
    await release()
    expect(batches).toEqual([['a'], ['b', 'c', 'd']])
    await release()
    expect(await a).toBe('A')
    expect(await Promise.all(rest)).toEqual(['B', 'C', 'D'])
    // Idle again: the next key is read alone, at once.
    const e = read('e')
    await Bun.sleep(0)
    expect(batches.at(-1)).toEqual(['e'])
    await release()
    expect(await e).toBe('E')
  })

  it('fails the keys of a failed read only; the keys waiting meanwhile are still read', async () => {
    const { read, batches, release } = heldReads()
    const a = read('a').catch((e: Error) => e.message)
    await Bun.sleep(0)
    const b = read('b')
    await release('fail')
    expect(await a).toBe('the store is out of reach')
    expect(batches).toEqual([['a'], ['b']])
    await release()
    expect(await b).toBe('B')
  })
})
