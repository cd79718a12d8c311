// legs: once — unit test; no store
import { describe, expect, it, spyOn } from 'bun:test'
import { batchedSink, createLogger } from './logger'

describe('the access-log line', () => {
  it('is the very line info("request", fields) writes, whatever the path holds', () => {
    const lines: string[] = []
    const log = createLogger('info', (line) => lines.push(line))
    const cases: [string | undefined, string, string, number, number | undefined][] = [
      ['b8a1c3e2-1111-4222-8333-123456789abc', 'GET', '/i/x/.well-known/openid-configuration', 200, 1.25],
      [undefined, 'POST', '/v1/workspaces', 422, undefined],
      ['trace:1', 'GET', '/a"b\\c\u0001/ü/%22', 404, 0],
    ]
    // One millisecond for both lines of a case (CI once saw the two straddle one).
    const clock = spyOn(Date, 'now').mockImplementation(() => 1_780_000_000_000)
    try {
      for (const [id, method, path, status, ms] of cases) {
        lines.length = 0
        log.request(id, method, path, status, ms)
        log.info('request', { request_id: id, method, path, status, duration_ms: ms })
        const [fast, general] = lines as [string, string]
        expect(fast).toBe(general)
        expect(JSON.parse(fast)).toEqual(JSON.parse(general))
      }
    } finally {
      clock.mockRestore()
    }
  })

  it('stays that line for every path, past the remembered ones and beyond their length', () => {
    const lines: string[] = []
    const log = createLogger('info', (line) => lines.push(line))
    const clock = spyOn(Date, 'now').mockImplementation(() => 1_780_000_000_000)
    try {
      // More paths than are remembered (the memo starts over), each asked twice, and long ones.
      const paths = Array.from({ length: 1_200 }, (_, i) => `/i/${i}/"\\${'é'.repeat(i % 300)}`)
      for (const path of [...paths, ...paths.reverse()]) {
        for (const method of ['GET', 'POST', 'M"\u0001']) {
          lines.length = 0
          log.request('id', method, path, 200, 0.5)
          log.info('request', { request_id: 'id', method, path, status: 200, duration_ms: 0.5 })
          expect(lines[0]).toBe(lines[1]!)
        }
      }
    } finally {
      clock.mockRestore()
    }
  })

  it('is not written below info', () => {
    const lines: string[] = []
    createLogger('warn', (line) => lines.push(line)).request('id', 'GET', '/', 200, 1)
    expect(lines).toEqual([])
  })
})

describe('the batch of standard output', () => {
  it('writes every line in order, access lines formatted as they would be at once', () => {
    // Each run sees the same clock, a millisecond a call: a line formatted with the time of its
    // batch's writing instead of its own would differ.
    let ms = 0
    const clock = spyOn(Date, 'now').mockImplementation(() => 1_780_000_000_000 + ms++)
    const direct: string[] = []
    const chunks: string[] = []
    const batch = batchedSink((chunk) => chunks.push(chunk))
    try {
      for (const sink of [(line: string) => direct.push(line), batch]) {
        ms = 0
        const log = createLogger('info', sink)
        for (let i = 0; i < 1000; i++) {
          log.request(`id-${i}`, 'GET', `/i/x/"caf\u00e9"/${i}`, 200, i / 100)
          if (i % 100 === 0) log.warn('something', { i })
        }
        log.request(undefined, 'POST', '/v1/workspaces', 422)
      }
      batch.flush()
    } finally {
      clock.mockRestore()
    }
    expect(chunks.join('')).toBe(direct.join(''))
    expect(new Set(direct.map((l) => (JSON.parse(l) as { time: string }).time)).size).toBe(direct.length)
    // A thousand lines in a few writes, each of whole lines.
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.length).toBeLessThan(10)
    for (const chunk of chunks) expect(chunk.endsWith('\n')).toBe(true)
  })

  it('writes a batch once its lines reach 64 KiB, long paths counted as they are', () => {
    const chunks: string[] = []
    const log = createLogger(
      'info',
      batchedSink((chunk) => chunks.push(chunk)),
    )
    const long = `/v1/${'x'.repeat(8000)}`
    for (let i = 0; i < 8; i++) log.request(`id-${i}`, 'GET', long, 404, 0.1)
    expect(chunks).toHaveLength(0)
    log.request('id-8', 'GET', long, 404, 0.1)
    expect(chunks).toHaveLength(1)
    expect(chunks[0]!.split('\n')).toHaveLength(10)
  })
})
