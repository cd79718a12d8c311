// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { inject } from './inject'

const request = (over: Partial<Parameters<typeof inject>[1]> = {}) => ({
  method: 'GET',
  url: '/i/x/path?q=1',
  headers: { host: 'auth.example', accept: 'application/json' },
  remoteAddress: '203.0.113.9',
  ...over,
})

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

describe('inject', () => {
  it('gives the handler node:http request fields and a readable body with its length', async () => {
    let seen: Record<string, unknown> = {}
    const res = await inject(
      async (req, res) => {
        seen = {
          method: req.method,
          url: req.url,
          host: req.headers.host,
          length: req.headers['content-length'],
          chunked: req.headers['transfer-encoding'],
          address: req.socket.remoteAddress,
          body: await readAll(req),
        }
        res.end('ok')
      },
      request({
        method: 'POST',
        headers: { host: 'auth.example', 'transfer-encoding': 'chunked' },
        body: new TextEncoder().encode('a=1&b=2'),
      }),
    )
    expect(await res.text()).toBe('ok')
    expect(seen).toEqual({
      method: 'POST',
      url: '/i/x/path?q=1',
      host: 'auth.example',
      length: '7',
      chunked: undefined,
      address: '203.0.113.9',
      body: 'a=1&b=2',
    })
  })

  it('keeps every Set-Cookie, the status and the headers of writeHead, and a body written in parts', async () => {
    const res = await inject((_req, res: ServerResponse) => {
      res.setHeader('Set-Cookie', ['a=1; Path=/', 'b=2; Path=/i/x; HttpOnly'])
      res.writeHead(303, { Location: '/next', 'Cache-Control': 'no-store' })
      res.write('part one, ')
      res.end(Buffer.from('part two'))
    }, request())
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/next')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/i/x; HttpOnly'])
    expect(await res.text()).toBe('part one, part two')
  })

  it('asks for the client address only when the handler reads it, and once', async () => {
    let asked = 0
    const remoteAddress = () => {
      asked++
      return '198.51.100.7'
    }
    await inject((_req, res) => res.end('ok'), request({ remoteAddress }))
    expect(asked).toBe(0)
    let seen: unknown[] = []
    await inject((req, res) => {
      seen = [req.socket.remoteAddress, req.socket.remoteAddress]
      res.end('ok')
    }, request({ remoteAddress }))
    expect(seen).toEqual(['198.51.100.7', '198.51.100.7'])
    expect(asked).toBe(1)
  })

  it('keeps header names case-insensitive, numbers as strings, and removed headers out', async () => {
    const res = await inject((_req, res) => {
      res.setHeader('Content-Type', 'application/json')
      res.setHeader('X-Gone', 'soon')
      res.setHeader('Content-Length', 2)
      expect(res.getHeader('content-type')).toBe('application/json')
      expect(res.hasHeader('CONTENT-TYPE')).toBe(true)
      res.removeHeader('x-gone')
      expect(res.hasHeader('X-Gone')).toBe(false)
      expect(res.getHeaderNames()).toEqual(['content-type', 'content-length'])
      res.end('{}')
    }, request())
    expect([...res.headers]).toEqual([
      ['content-length', '2'],
      ['content-type', 'application/json'],
    ])
  })

  it('answers a 204 without a body, and emits finish after end', async () => {
    let finished = false
    const res = await inject((_req, res) => {
      res.on('finish', () => {
        finished = true
      })
      res.statusCode = 204
      res.end()
    }, request())
    expect(res.status).toBe(204)
    expect(res.body).toBeNull()
    await new Promise((r) => process.nextTick(r))
    expect(finished).toBe(true)
  })

  it('rejects when the handler throws before answering', async () => {
    await expect(
      inject(() => {
        throw new Error('boom')
      }, request()),
    ).rejects.toThrow('boom')
    await expect(inject(async () => Promise.reject(new Error('later')), request())).rejects.toThrow('later')
  })
})
