import { randomBytes } from 'node:crypto'
import { existsSync, unlinkSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Elysia } from 'elysia'
import type { Core } from '../core'
import { createInstanceResolver, type InstanceTarget, issuerFor } from './instances'
import { createPageRouter } from './pages/router'
import { ErrorPage } from './pages/views'
import type { InstancePool } from './pool'

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
 * The identity plane behind the control plane's port. oidc-provider is a Koa (node:http) app;
 * Elysia takes fetch handlers only, so the Providers run on a node:http server on a private unix
 * socket in this process and Elysia forwards `/i/:ws/*` to it. Discovery and JWKS are answered
 * from a short cache without crossing the bridge.
 */
export class IdentityBridge {
  readonly socketPath = join(tmpdir(), `gatehouse-${process.pid}-${randomBytes(4).toString('hex')}.sock`)
  readonly resolve
  private server: Server | null = null
  private readonly pages
  private readonly cache = new Map<string, Cached>()

  constructor(
    private readonly core: Core,
    readonly pool: InstancePool,
  ) {
    this.resolve = createInstanceResolver(core.config)
    this.pages = createPageRouter(core)
  }

  async start(): Promise<void> {
    if (existsSync(this.socketPath)) unlinkSync(this.socketPath)
    const server = createServer((req, res) => {
      this.dispatch(req, res).catch((e) => {
        this.core.log.error('identity plane failed', { error: String(e), stack: (e as Error).stack })
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ detail: 'Internal Server Error' }))
      })
    })
    await new Promise<void>((resolve) => server.listen(this.socketPath, resolve))
    this.server = server
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
    if (existsSync(this.socketPath)) unlinkSync(this.socketPath)
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://bridge')
    const target = this.resolve(String(req.headers['x-forwarded-host'] ?? ''), url.pathname)
    const instance = target && this.pool.get(target.instanceId)
    if (!target || !instance) {
      const nf = notFound(String(req.headers.accept ?? ''))
      res.writeHead(404, { 'content-type': nf.type })
      res.end(nf.body)
      return
    }
    // oidc-provider derives its mount path from originalUrl minus url.
    req.originalUrl = req.url
    req.url = req.url?.slice(target.prefix.length) || '/'
    const path = url.pathname.slice(target.prefix.length) || '/'
    const clientIp = String(req.headers['x-forwarded-for'] ?? '')
    const handled = await this.pages({
      instance,
      prefix: target.prefix,
      req,
      res,
      path,
      query: url.searchParams,
      clientIp,
    })
    if (!handled) instance.callback(req, res)
  }

  /** Sends a request to an instance through the bridge (the control plane's own OIDC calls use it). */
  fetch(instanceId: string, path: string, init: RequestInit = {}, clientIp = '127.0.0.1'): Promise<Response> {
    const issuer = new URL(issuerFor(this.core.config, instanceId))
    const headers = new Headers(init.headers)
    headers.set('x-forwarded-proto', issuer.protocol.slice(0, -1))
    headers.set('x-forwarded-host', issuer.host)
    headers.set('x-forwarded-for', clientIp)
    headers.set('host', issuer.host)
    return fetch(`http://localhost${issuer.pathname.replace(/\/$/, '')}${path}`, {
      ...init,
      headers,
      unix: this.socketPath,
      redirect: 'manual',
      decompress: false,
    } as RequestInit)
  }

  /** Forwards a public request to its instance, or answers discovery/JWKS from the cache. */
  async forward(request: Request, url: URL, target: InstanceTarget, clientIp: string): Promise<Response> {
    const sub = url.pathname.slice(target.prefix.length) || '/'
    const cacheKey = request.method === 'GET' && CACHEABLE.has(sub) ? `${target.instanceId}${sub}` : null
    if (cacheKey) {
      const hit = this.cache.get(cacheKey)
      // A cache hit skips the bridge, so it checks here that the instance still serves; a miss is
      // checked once, by the dispatcher.
      if (hit && hit.expires > this.core.clock.now()) {
        if (this.pool.isServing(target.instanceId)) return new Response(hit.body, { headers: hit.headers })
        const nf = notFound(request.headers.get('accept') ?? '')
        return new Response(nf.body, { status: 404, headers: { 'content-type': nf.type } })
      }
    }
    const issuer = new URL(issuerFor(this.core.config, target.instanceId))
    const headers = new Headers(request.headers)
    // The issuer is authoritative for the URLs the provider builds; the socket peer is the client.
    headers.set('x-forwarded-proto', issuer.protocol.slice(0, -1))
    headers.set('x-forwarded-host', issuer.host)
    headers.set('x-forwarded-for', clientIp)
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD'
    const response = await fetch(`http://localhost${url.pathname}${url.search}`, {
      method: request.method,
      headers,
      body: hasBody ? await request.arrayBuffer() : undefined,
      unix: this.socketPath,
      redirect: 'manual',
      decompress: false,
    } as RequestInit)
    if (cacheKey && response.status === 200) {
      const body = await response.arrayBuffer()
      const kept = [...response.headers].filter(
        ([k]) => k === 'content-type' || k === 'cache-control' || k === 'access-control-allow-origin',
      )
      this.cache.set(cacheKey, { body, headers: kept, expires: this.core.clock.now() + CACHE_MS })
      return new Response(body, { status: 200, headers: kept })
    }
    return response
  }

  /** Drops cached discovery/JWKS of an instance (after key changes or deletion). */
  invalidate(instanceId: string): void {
    for (const sub of CACHEABLE) this.cache.delete(`${instanceId}${sub}`)
    this.pool.evict(instanceId)
  }
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

/** Routes requests addressed to an identity instance (by path or host) across the bridge. */
export const identityPlanePlugin = (bridge: IdentityBridge) =>
  new Elysia({ name: 'identity-plane' }).onRequest(({ request, server }) => {
    const url = new URL(request.url)
    const target = bridge.resolve(url.host, url.pathname)
    if (!target) return
    const ip = server?.requestIP(request)?.address ?? ''
    return bridge.forward(request, url, target, ip)
  })
