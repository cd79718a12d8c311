import { describe, expect, it } from 'bun:test'
import { gathered } from './gather'

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
