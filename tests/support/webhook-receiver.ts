import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Json } from './users'

/** One request a receiver got: its raw body as sent (what the signature covers) and its JSON. */
export interface Received {
  path: string
  method: string
  headers: Record<string, string>
  raw: string
  body: Json
  /** The event id of `Service-Webhook-Id`. */
  webhookId: string | null
  signature: string | null
}

/** What a path answers: a status, or a function of the request (a status or a whole response). */
export type Answer = number | ((req: Received) => number | Response | Promise<Response>)

/**
 * A webhook receiver on 127.0.0.1 (the servers under test may post there only with
 * WEBHOOKS_ALLOW_PRIVATE=true): it records every request and answers each path with its `respond`
 * status (200 unless told). Each test gives its endpoints paths of their own (`url()`), so one
 * receiver serves a whole file and a test reads only its own paths' requests.
 */
export interface Receiver {
  port: number
  /** A fresh path of this receiver (`/hook/<uuid>`), or `path` when given, as a URL. */
  url(path?: string): string
  /** Every request, in order of arrival. */
  requests: Received[]
  /** The requests to the path of `url` (a URL of this receiver or its path). */
  to(url: string): Received[]
  respond(url: string, answer: Answer): void
  stop(): Promise<void>
}

const pathOf = (url: string) => (url.startsWith('/') ? url : new URL(url).pathname)

export function startReceiver(): Receiver {
  const requests: Received[] = []
  const answers = new Map<string, Answer>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const raw = await req.text()
      let body: Json = null
      try {
        body = JSON.parse(raw)
      } catch {
        body = undefined
      }
      const headers: Record<string, string> = {}
      req.headers.forEach((value, key) => {
        headers[key] = value
      })
      const got: Received = {
        path: new URL(req.url).pathname,
        method: req.method,
        headers,
        raw,
        body,
        webhookId: req.headers.get('service-webhook-id'),
        signature: req.headers.get('service-signature'),
      }
      requests.push(got)
      const answer = answers.get(got.path) ?? 200
      const status = typeof answer === 'number' ? answer : await answer(got)
      if (status instanceof Response) return status
      return new Response(status >= 200 && status < 300 ? 'ok' : 'no', { status })
    },
  })
  const port = server.port!
  return {
    port,
    url: (path = `/hook/${crypto.randomUUID()}`) => `http://127.0.0.1:${port}${path}`,
    requests,
    to: (url) => requests.filter((r) => r.path === pathOf(url)),
    respond: (url, answer) => {
      answers.set(pathOf(url), answer)
    },
    stop: () => server.stop(true),
  }
}

/** `t=<unix>,v1=<hex>[,v1=<hex>…]` read apart; null when it is not that shape. */
export function parseSignature(header: string | null): { t: number; v1: string[] } | null {
  if (!header) return null
  let t: number | null = null
  const v1: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) return null
    const [key, value] = [part.slice(0, eq).trim(), part.slice(eq + 1).trim()]
    if (key === 't') {
      if (!/^\d+$/.test(value) || t !== null) return null
      t = Number(value)
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) return null
      v1.push(value)
    }
  }
  return t === null || v1.length === 0 ? null : { t, v1 }
}

/** SPEC's signature: HMAC-SHA256 over `<t>.<raw body>`, keyed with the whole secret string, hex. */
export const hmacHex = (secret: string, t: number, raw: string) =>
  createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')

/** The verifier SPEC describes for a receiver, written from SPEC alone (not from the product's code). */
export function verifySignature(
  secret: string,
  header: string | null,
  raw: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const parsed = parseSignature(header)
  if (!parsed) return false
  if (Math.abs(nowSeconds - parsed.t) > toleranceSeconds) return false
  const expected = Buffer.from(hmacHex(secret, parsed.t, raw), 'hex')
  // Every entry is compared (a rotation sends two); constant time for each.
  let ok = false
  for (const v of parsed.v1) {
    const got = Buffer.from(v, 'hex')
    if (got.length === expected.length && timingSafeEqual(got, expected)) ok = true
  }
  return ok
}
