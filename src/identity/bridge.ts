import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { Core } from '../core'
import { inject } from './inject'
import { createInstanceResolver, type InstanceTarget, issuerFor } from './instances'
import { createPageRouter } from './pages/router'
import { ErrorPage } from './pages/views'
import type { InstancePool } from './pool'
import { IDENTITY_CSP } from './security-headers'

declare module 'node:http' {
  interface IncomingMessage {
    originalUrl?: string
  }
}

const CACHEABLE = new Set(['/.well-known/openid-configuration', '/jwks'])
const CACHE_MS = 60_000

interface Cached {
  body: ArrayBuffer
  headers: [string, string][]
  expires: number
}

/**
 * The identity plane behind the control plane's port. oidc-provider is a Koa (node:http) app and
 * Elysia takes fetch handlers, so requests addressed to an instance are handed to it in-process
 * (`inject`): no second HTTP hop, no socket. Discovery and JWKS are answered from a short cache.
 */
export class IdentityBridge {
  readonly resolve
  private readonly pages
  private readonly cache = new Map<string, Cached>()

  constructor(
    private readonly core: Core,
    readonly pool: InstancePool,
  ) {
    this.resolve = createInstanceResolver(core.config)
    this.pages = createPageRouter(core)
    core.instances.subscribe((instanceId) => this.invalidate(instanceId))
  }

  private async dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    target: InstanceTarget,
    url: URL,
    clientIp: string,
  ) {
    const instance = this.pool.get(target.instanceId)
    if (!instance) {
      const nf = notFound(String(req.headers.accept ?? ''))
      res.writeHead(404, { 'content-type': nf.type })
      res.end(nf.body)
      return
    }
    // Set first so oidc-provider can add its inline scripts' hashes to it (see IDENTITY_CSP).
    res.setHeader('content-security-policy', IDENTITY_CSP)
    // oidc-provider derives its mount path from originalUrl minus url.
    req.originalUrl = req.url
    req.url = req.url?.slice(target.prefix.length) || '/'
    const handled = await this.pages({
      instance,
      prefix: target.prefix,
      req,
      res,
      path: url.pathname.slice(target.prefix.length) || '/',
      query: url.searchParams,
      clientIp,
    })
    if (!handled) instance.callback(req, res)
  }

  /** Sends a request to an instance through the bridge (the control plane's own OIDC calls use it). */
  async fetch(
    instanceId: string,
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: string } = {},
    clientIp = '127.0.0.1',
  ): Promise<Response> {
    const url = new URL(`${issuerFor(this.core.config, instanceId).replace(/\/$/, '')}${path}`)
    const target = this.resolve(url.host, url.pathname)
    if (!target) throw new Error(`no identity instance at ${url.href}`)
    const headers: IncomingHttpHeaders = { host: url.host }
    for (const [name, value] of Object.entries(init.headers ?? {})) headers[name.toLowerCase()] = value
    const body = init.body ? new TextEncoder().encode(init.body) : null
    return this.send(target, url, init.method ?? 'GET', headers, clientIp, body)
  }

  /** Forwards a public request to its instance, or answers discovery/JWKS from the cache. */
  async forward(request: Request, url: URL, target: InstanceTarget, clientIp: string): Promise<Response> {
    const sub = url.pathname.slice(target.prefix.length) || '/'
    const cacheKey = request.method === 'GET' && CACHEABLE.has(sub) ? `${target.instanceId}${sub}` : null
    if (cacheKey) {
      const hit = this.cache.get(cacheKey)
      // A cache hit skips the provider, so it checks here that the instance still serves; a miss is
      // checked once, by the dispatcher.
      if (hit && hit.expires > this.core.clock.now()) {
        if (this.pool.isServing(target.instanceId)) return new Response(hit.body, { headers: hit.headers })
        const nf = notFound(request.headers.get('accept') ?? '')
        return new Response(nf.body, { status: 404, headers: { 'content-type': nf.type } })
      }
    }
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD'
    const body = hasBody ? await readBody(request) : null
    if (body === TOO_LARGE) {
      return Response.json(
        { detail: 'Request body too large' },
        { status: 413, headers: { connection: 'close' } },
      )
    }
    const headers: IncomingHttpHeaders = {}
    for (const [name, value] of request.headers) headers[name] = value
    const response = await this.send(target, url, request.method, headers, clientIp, body)
    if (cacheKey && response.status === 200) {
      const cached = await response.arrayBuffer()
      const kept = [...response.headers].filter(
        ([k]) => k === 'content-type' || k === 'cache-control' || k === 'access-control-allow-origin',
      )
      this.cache.set(cacheKey, { body: cached, headers: kept, expires: this.core.clock.now() + CACHE_MS })
      return new Response(cached, { status: 200, headers: kept })
    }
    return response
  }

  private send(
    target: InstanceTarget,
    url: URL,
    method: string,
    headers: IncomingHttpHeaders,
    clientIp: string,
    body: Uint8Array | null,
  ): Promise<Response> {
    // The issuer is authoritative for the URLs the provider builds (`provider.proxy` is on), and the
    // client address is the one the front door resolved (`clientAddress`): whatever the client
    // claimed in these is replaced.
    const issuer = issuerFor(this.core.config, target.instanceId)
    const scheme = issuer.indexOf('://')
    headers['x-forwarded-proto'] = issuer.slice(0, scheme)
    headers['x-forwarded-host'] = issuer.slice(scheme + 3).split('/', 1)[0]
    headers['x-forwarded-for'] = clientIp
    const request = { method, url: `${url.pathname}${url.search}`, headers, body, remoteAddress: clientIp }
    return inject(
      (req, res) =>
        this.dispatch(req, res, target, url, clientIp).catch((e) => {
          this.core.log.error('identity plane failed', { error: String(e), stack: (e as Error).stack })
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ detail: 'Internal Server Error' }))
        }),
      request,
    )
  }

  /** Forgets what this process holds about an instance: cached discovery/JWKS, its Provider, its state. */
  invalidate(instanceId: string): void {
    for (const sub of CACHEABLE) this.cache.delete(`${instanceId}${sub}`)
    this.pool.evict(instanceId)
  }
}

/** Bodies sent to an identity instance are forms and small JSON; oidc-provider itself stops at 56 KiB. */
const BODY_LIMIT = 64 * 1024
const TOO_LARGE = Symbol('too large')

async function readBody(request: Request): Promise<Uint8Array | typeof TOO_LARGE> {
  const length = request.headers.get('content-length')
  if (length !== null) {
    // Known length (the usual case): Bun reads it natively, far cheaper than pulling the stream.
    return Number(length) > BODY_LIMIT ? TOO_LARGE : new Uint8Array(await request.arrayBuffer())
  }
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.byteLength
    if (size > BODY_LIMIT) {
      await reader.cancel()
      return TOO_LARGE
    }
    chunks.push(r.value)
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks)
}

function notFound(accept: string): { body: string; type: string } {
  if (accept.includes('text/html')) {
    return {
      body: ErrorPage({
        title: 'Not found',
        message: 'There is no identity instance at this address.',
      }) as string,
      type: 'text/html; charset=utf-8',
    }
  }
  return { body: JSON.stringify({ detail: 'Identity instance not found' }), type: 'application/json' }
}
