import { describe, expect, it } from 'bun:test'
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
    for (const [id, method, path, status, ms] of cases) {
      lines.length = 0
      log.request(id, method, path, status, ms)
      log.info('request', { request_id: id, method, path, status, duration_ms: ms })
      const [fast, general] = lines as [string, string]
      // Written in the same millisecond but for the time: compare without it, then parse.
      expect(fast.slice(fast.indexOf('"level"'))).toBe(general.slice(general.indexOf('"level"')))
      expect(JSON.parse(fast)).toEqual(JSON.parse(general))
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
    const direct: string[] = []
    const chunks: string[] = []
    const batch = batchedSink((chunk) => chunks.push(chunk))
    for (const sink of [(line: string) => direct.push(line), batch]) {
      const log = createLogger('info', sink)
      for (let i = 0; i < 1000; i++) {
        log.request(`id-${i}`, 'GET', `/i/x/"caf\u00e9"/${i}`, 200, i / 100)
        if (i % 100 === 0) log.warn('something', { i })
      }
      log.request(undefined, 'POST', '/v1/workspaces', 422)
    }
    batch.flush()
    // The two runs were made at different times.
    const withoutTime = (text: string) => text.replace(/"time":"[^"]+"/g, '"time":""')
    expect(withoutTime(chunks.join(''))).toBe(withoutTime(direct.join('')))
    // A thousand lines in a few writes, each of whole lines.
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.length).toBeLessThan(10)
    for (const chunk of chunks) expect(chunk.endsWith('\n')).toBe(true)
  })
})
