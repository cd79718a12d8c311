import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import type { Core } from '../../core'
import { isStoreUnavailable, loggable } from '../../db/store'
import type { DataPlaneLimit } from '../../limits/data-plane'
import { logRequest } from '../../shared/plugins/request-log'
import { drawnWithBrand } from '../../shared/views/brand'
import { FAVICON_PATH } from '../../shared/views/hosted-layout'
import {
  BODY_TOO_LARGE,
  errorResponse,
  type IdentityError,
  INSTANCE_NOT_FOUND,
  rateLimitedError,
  SERVER_ERROR,
  STORE_UNAVAILABLE,
  writeError,
} from '../errors'
import { type InstanceAddressing, type InstanceTarget, issuerFor, MEMO_MS, PLATFORM } from '../instances'
import { faviconResponse } from '../pages/assets'
import { serving } from '../provider'
import type { HostedRequest } from './hosted'
import { type Finish, inject } from './inject'
import type { InstanceApp } from './instance-app'
import type { Instance, InstancePool } from './pool'
import { DOCUMENT_CSP, type HeaderBag, identitySecurityHeaders } from './security-headers'

/** What an uncaught failure answers: 503 while the database is out of reach, else 500. */
const failureOf = (e: unknown): IdentityError => (isStoreUnavailable(e) ? STORE_UNAVAILABLE : SERVER_ERROR)

/** The documents answered from the cache, by their path below the issuer. */
const DISCOVERY = '/.well-known/openid-configuration'
const JWKS = '/jwks'
type Document = 'discovery' | 'jwks'
/** Which cached document a path asks for: two comparisons, no hashing of the path. */
const documentAt = (path: string): Document | null =>
  path === DISCOVERY ? 'discovery' : path === JWKS ? 'jwks' : null

/**
 * oidc-provider's endpoints that answer JSON only, never a page: their requests (the token path
 * first) go straight to the Provider, without the page router or the brand's async context (which
 * costs every await it spans). No hosted page lives at these paths.
 */
const JSON_ENDPOINTS = new Set([
  '/token',
  '/token/introspection',
  '/token/revocation',
  '/me',
  '/device/auth',
  // Pushed authorization requests (RFC 9126), on by default in oidc-provider.
  '/request',
  DISCOVERY,
  JWKS,
])

const CACHE_MS = 60_000
/**
 * Instances whose documents are cached at most (discovery and JWKS of 1,000 instances: 2.0 + 0.6 KiB
 * a pair, and their headers): an unbounded Map kept them for every instance ever asked, ~30 MiB for
 * 10,000, for good.
 */
const CACHED_INSTANCES = 1_000

interface Cached {
  /** The answer with its headers, the plane's security headers included; each hit is a clone. */
  response: Response
  expires: number
  /**
   * Until when the instance is known to serve (the pool's answer, remembered as long as the pool
   * remembers it, MEMO_MS): a hit before then is answered without asking the pool, and without a
   * promise. An instance that stops serving is invalidated, which drops this entry.
   */
  servingUntil: number
}

/**
 * A document's answer to keep in the cache, its text as UTF-8 bytes: every hit is a clone, and Bun
 * copies a string body into each clone (200,000 clones of a 16,000-character body: 65 young
 * collections, 8 for the same body as bytes, whatever its length). Under the discovery load
 * (BUN_JSC_logGC=1) a cached answer allocated 3.4 KiB instead of 5.5.
 */
const cachedAnswer = (text: string, headers: HeadersInit) =>
  new Response(Buffer.from(text), { status: 200, headers })

/** An instance's cached documents, under one key: a hit hashes the instance id, not a joined string. */
type Documents = Partial<Record<Document, Cached>>

/**
 * A document as every instance answers it, learned from the provider's first answer of it in this
 * process: the cached answer's headers, and its text made from the instance. One Provider with one
 * configuration serves every instance, so discovery differs between them only by the issuer (every
 * endpoint URL is the issuer's), and the JWKS is the instance's public keys as the provider lists them
 * (`jwks` of its record). Each is learned only if the provider's own text is exactly what it makes.
 */
interface DocumentShape {
  headers: [string, string][]
  text(instance: Instance): string
}

/** The shape of a document answered by the provider for `instance`, or null if it is not what one makes. */
function shapeOf(
  document: Document,
  text: string,
  instance: Instance,
  headers: Headers,
): DocumentShape | null {
  const kept = [...headers]
  if (document === 'jwks') {
    const make = (i: Instance) => JSON.stringify(i.jwks)
    return text === make(instance) ? { headers: kept, text: make } : null
  }
  const parts = text.split(instance.issuer)
  return parts.length > 1 ? { headers: kept, text: (i) => parts.join(i.issuer) } : null
}

/**
 * Responses that already carry the request id and the plane's security headers, set before they
 * were built (the provider's, through `inject`) or copied from the cache: `answer` leaves them be.
 */
const headed = new WeakSet<Response>()

/**
 * Where a request to an instance goes: what the front door learns of a URL once and may remember
 * for it (`IdentityBridge.route`), so a repeated URL is not cut up again.
 */
export interface Route {
  readonly target: Readonly<InstanceTarget>
  /** The request's path, as the access log writes it. */
  readonly pathname: string
  /** Its path below the issuer's prefix. */
  readonly path: string
  /** The cached document at that path, if it is one. */
  readonly document: Document | null
}

/** What the front door knows of who sent a request, each resolved only when asked. */
export interface Caller {
  /** The client address (the peer, or past trusted proxies). */
  ip(): string
  /** The request's id: a new one, or a trusted proxy's. */
  requestId(): string
}

/**
 * A request on its way to an instance: where it goes, its path below the issuer's prefix, and who
 * sent it (the client address is resolved only if something reads it: the hosted pages do, the
 * token path does not, and resolving it asks the server for the peer).
 */
interface Dispatch {
  target: InstanceTarget
  path: string
  url: URL
  caller: Pick<Caller, 'ip'>
}

export interface FetchInit {
  method?: string
  headers?: Record<string, string>
  body?: string
}

/**
 * The identity plane behind the control plane's port. oidc-provider is a Koa (node:http) app and
 * Elysia takes fetch handlers, so requests addressed to an instance are handed to it in-process
 * (`inject`): no second HTTP hop, no socket. Discovery and JWKS are answered from a short cache.
 */
export class IdentityBridge {
  private readonly cache = new LRUCache<string, Documents>({ max: CACHED_INSTANCES })
  private readonly shapes: Partial<Record<Document, DocumentShape>> = {}
  private readonly secureHeaders
  /** The X-Forwarded-Proto and -Host of an instance's issuer, read off the template once. */
  private readonly forwardedOf: (instanceId: string) => { proto: string; host: string }

  constructor(
    private readonly core: Core,
    private readonly pool: InstancePool,
    private readonly addressing: InstanceAddressing,
    /** The hosted pages (every instance's) and the features' endpoints (workspace instances' only). */
    private readonly apps: { pages: InstanceApp; endpoints: InstanceApp | null },
    private readonly limit: DataPlaneLimit = () => null,
  ) {
    this.secureHeaders = identitySecurityHeaders(core.config.baseUrl.startsWith('https:'))
    this.forwardedOf = forwardedHeaders(core.config.authUrlTemplate)
    core.instances.subscribe((instanceId) => this.invalidate(instanceId))
  }

  /**
   * Where a request with this host and path goes: an instance's route, or null for the control
   * plane. The same URL always routes alike, so the front door may remember the answer.
   */
  route(host: string, pathname: string): Route | null {
    const target = this.addressing.resolve(host, pathname)
    if (!target) return null
    const path = subPath(pathname, target)
    // Shared by every request of this URL (the front door remembers it): never changed.
    return Object.freeze({ target: Object.freeze(target), pathname, path, document: documentAt(path) })
  }

  /**
   * The front door's share: a request addressed to an instance is answered here, before any
   * control-plane parsing or hooks, with `X-Request-Id`, the identity plane's headers and one
   * access-log line. `url` is the request's, when the front door parsed it.
   */
  handle(request: Request, route: Route, caller: Caller, url?: URL): Promise<Response> | Response {
    const startedAt = performance.now()
    const id = caller.requestId()
    // Discovery and JWKS, the plane's most frequent requests, are answered from a fresh cache entry
    // at once: no promise, no await, and none of the bookkeeping `done` does for other answers (the
    // copy already carries the plane's headers).
    const method = request.method
    const hit =
      route.document && method === 'GET' ? this.fresh(route.target.instanceId, route.document) : undefined
    if (hit) {
      const response = this.fromCache(hit.response, id)
      logRequest(this.core.log, id, method, route.pathname, response.status, startedAt)
      return response
    }
    // Past the cache: the whole URL (search, query), parsed again only if the front door did not.
    const to = { target: route.target, path: route.path, url: url ?? new URL(request.url) }
    return this.answer(request, to, caller, id, startedAt)
  }

  private async answer(
    request: Request,
    route: Omit<Dispatch, 'caller'>,
    caller: Caller,
    id: string,
    startedAt: number,
  ) {
    let response: Response
    try {
      response = await this.forward(request, route, caller, id)
    } catch (e) {
      if (isStoreUnavailable(e))
        this.core.log.warn('database unavailable', { request_id: id, error: loggable(e).error })
      else this.core.log.error('identity plane failed', { request_id: id, ...loggable(e) })
      response = errorResponse(failureOf(e), request.headers.get('accept') ?? '')
    }
    return this.done(request, route.url.pathname, response, id, startedAt)
  }

  /** Every answer of the plane leaves with its request id and security headers, and one log line. */
  private done(
    request: Request,
    pathname: string,
    response: Response,
    id: string,
    startedAt: number,
  ): Response {
    if (!headed.has(response)) this.head(response.headers, id)
    logRequest(this.core.log, id, request.method, pathname, response.status, startedAt)
    return response
  }

  /** An instance's cached document, when it is current and the instance known to serve. */
  private fresh(instanceId: string, document: Document): Cached | undefined {
    const hit = this.cache.get(instanceId)?.[document]
    if (!hit) return undefined
    const now = this.core.clock.now()
    return hit.expires > now && hit.servingUntil > now ? hit : undefined
  }

  /** What every answer of the plane carries: its request id and the plane's security headers. */
  private head(headers: HeaderBag, id: string): void {
    headers.set('x-request-id', id)
    this.secureHeaders(headers)
  }

  /** Sends a request to an instance in-process (the control plane's own OIDC calls use it). */
  fetch(instanceId: string, path: string, init: FetchInit = {}, clientIp = '127.0.0.1'): Promise<Response> {
    const url = new URL(`${issuerFor(this.core.config, instanceId).replace(/\/$/, '')}${path}`)
    const target = { instanceId, prefix: this.addressing.prefixOf(instanceId) }
    const headers: IncomingHttpHeaders = { host: url.host }
    for (const [name, value] of Object.entries(init.headers ?? {})) headers[name.toLowerCase()] = value
    const body = init.body ? new TextEncoder().encode(init.body) : null
    const to = { target, path: subPath(url.pathname, target), url, caller: { ip: () => clientIp } }
    return this.send(to, init.method ?? 'GET', headers, body)
  }

  /**
   * Forwards a public request to its instance, or answers discovery/JWKS from the cache (without
   * resolving the client address, which costs more than the rest of a hit).
   */
  private async forward(
    request: Request,
    route: Omit<Dispatch, 'caller'>,
    caller: Caller,
    id: string,
  ): Promise<Response> {
    const { instanceId } = route.target
    if (route.path === FAVICON_PATH && request.method === 'GET') return faviconResponse()
    const exempt = documentAt(route.path)
    const document = request.method === 'GET' ? exempt : null
    if (document) {
      const hit = this.cache.get(instanceId)?.[document]
      // A cache hit skips the provider, so it checks here that the instance still serves; a miss is
      // checked once, by the dispatcher.
      if (hit && hit.expires > this.core.clock.now()) {
        if (await this.pool.isServing(instanceId)) {
          hit.servingUntil = this.core.clock.now() + MEMO_MS
          return this.headedCopy(hit.response, id)
        }
        return errorResponse(INSTANCE_NOT_FOUND, request.headers.get('accept') ?? '')
      }
    }
    // A cold instance's document, once the provider answered it for one instance of this process:
    // made here, as the provider would answer it, without its pipeline (Koa, oidc-provider's
    // middleware and route: ~0.4 ms of a cold instance's first discovery, most of its cost).
    const shape = document ? this.shapes[document] : undefined
    if (document && shape) {
      const instance = this.pool.held(instanceId) ?? (await this.pool.get(instanceId))
      if (!instance) return errorResponse(INSTANCE_NOT_FOUND, request.headers.get('accept') ?? '')
      const made = cachedAnswer(shape.text(instance), shape.headers)
      return this.remember(instanceId, document, made, id)
    }
    // A feature's endpoint (never the platform's) answers JSON; a hosted page is a browser's.
    const endpoints = instanceId === PLATFORM ? null : this.apps.endpoints
    const endpoint = endpoints?.matches(request.method, route.path) ? endpoints : null
    // SPEC "Limits": discovery and JWKS are exempt; everything else of an instance counts. What is
    // neither the provider's JSON endpoint nor a feature's is a browser's (a page, its assets, the
    // authorization endpoint), which may take the pages' reserve.
    if (!exempt) {
      const pending = this.limit(instanceId, !endpoint && !JSON_ENDPOINTS.has(route.path), caller)
      const decision = pending instanceof Promise ? await pending : pending
      if (decision && !decision.allowed) {
        const response = errorResponse(rateLimitedError(decision), request.headers.get('accept') ?? '')
        response.headers.set('retry-after', String(decision.retryAfter))
        return response
      }
    }
    // One native copy into the plain object node:http handlers read (lower-case names).
    const headers: IncomingHttpHeaders = request.headers.toJSON()
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD'
    const body = hasBody ? await readBody(request, headers['content-length']) : null
    if (body === TOO_LARGE) {
      const response = errorResponse(BODY_TOO_LARGE, request.headers.get('accept') ?? '')
      // The rest of the body is never read: the connection cannot carry another request.
      response.headers.set('connection', 'close')
      return response
    }
    // A hosted page or a feature's endpoint, counted above like any other request of the instance.
    // The provider's JSON endpoints (the token path first) are neither: they skip the pages' routes.
    const page = !JSON_ENDPOINTS.has(route.path) && this.apps.pages.matches(request.method, route.path)
    const app = endpoint ?? (page ? this.apps.pages : null)
    if (app) {
      const instance = this.pool.held(instanceId) ?? (await this.pool.get(instanceId))
      if (!instance) return errorResponse(INSTANCE_NOT_FOUND, request.headers.get('accept') ?? '')
      // Resolved now, while the connection is surely there (the pages' throttles key on it).
      const ip = caller.ip()
      const hosted: HostedRequest = {
        instance,
        prefix: route.target.prefix,
        path: route.path,
        search: route.url.search,
        clientIp: () => ip,
      }
      return this.inInstance(instance, () => app.handle(request, body, hosted))
    }
    // The client address is passed as the peer's (see `send`): a forwarded-for the client wrote
    // must not stand in for it.
    if (headers['x-forwarded-for'] !== undefined) delete headers['x-forwarded-for']
    // The provider's own log lines (provider/error-events.ts) carry the id the access line has.
    headers['x-request-id'] = id
    const finish: Finish = (_status, headers) => this.head(headers, id)
    // A hosted page resolves the client address now, while the connection is surely there (its
    // throttles key on it); the JSON endpoints only if something reads it.
    if (!JSON_ENDPOINTS.has(route.path)) caller.ip()
    const to: Dispatch = { target: route.target, path: route.path, url: route.url, caller }
    const response = await this.send(to, request.method, headers, body, finish)
    headed.add(response)
    if (document && response.status === 200) {
      const kept = [...response.headers].filter(
        ([k]) => k === 'content-type' || k === 'cache-control' || k === 'access-control-allow-origin',
      )
      const text = await response.text()
      const cached = cachedAnswer(text, kept)
      cached.headers.set('content-security-policy', DOCUMENT_CSP)
      this.secureHeaders(cached.headers)
      const instance = this.pool.held(instanceId)
      if (!this.shapes[document] && instance) {
        const shape = shapeOf(document, text, instance, cached.headers)
        if (shape) this.shapes[document] = shape
      }
      return this.remember(instanceId, document, cached, id)
    }
    return response
  }

  /**
   * Caches an instance's document, found serving just now (the provider answered, or the pool), and
   * answers a copy of it.
   */
  private remember(instanceId: string, document: Document, cached: Response, id: string): Response {
    const now = this.core.clock.now()
    const documents = this.cache.get(instanceId) ?? {}
    documents[document] = { response: cached, expires: now + CACHE_MS, servingUntil: now + MEMO_MS }
    this.cache.set(instanceId, documents)
    return this.headedCopy(cached, id)
  }

  /** A copy of a cached answer with this request's id: the body and the other headers are shared as they are. */
  private fromCache(cached: Response, id: string): Response {
    const response = cached.clone()
    response.headers.set('x-request-id', id)
    return response
  }

  /** The same, for an answer that goes through `done`: marked so its headers are not set again. */
  private headedCopy(cached: Response, id: string): Response {
    const response = this.fromCache(cached, id)
    headed.add(response)
    return response
  }

  private send(
    to: Dispatch,
    method: string,
    headers: IncomingHttpHeaders,
    body: Uint8Array | null,
    finish?: Finish,
  ): Promise<Response> {
    // The issuer is authoritative for the URLs the provider builds (`provider.proxy` is on): whatever
    // the client claimed in these is replaced. The client address is the one the front door
    // resolved, handed over as the peer address (Koa's `ctx.ip` without a forwarded-for).
    const forwarded = this.forwardedOf(to.target.instanceId)
    headers['x-forwarded-proto'] = forwarded.proto
    headers['x-forwarded-host'] = forwarded.host
    const request = {
      method,
      // oidc-provider is mounted at the prefix: it derives its mount path from originalUrl minus url.
      url: `${to.path}${to.url.search}`,
      originalUrl: `${to.url.pathname}${to.url.search}`,
      headers,
      body,
      remoteAddress: () => to.caller.ip(),
    }
    return inject(
      (req, res) =>
        this.dispatch(req, res, to).catch((e) => {
          this.core.log.error('identity plane failed', loggable(e))
          if (res.headersSent) res.end()
          else writeError(res, failureOf(e), req.headers.accept)
        }),
      request,
      finish,
    )
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse, to: Dispatch) {
    const instance = this.pool.held(to.target.instanceId) ?? (await this.pool.get(to.target.instanceId))
    if (!instance) {
      writeError(res, INSTANCE_NOT_FOUND, req.headers.accept)
      return
    }
    const page = !JSON_ENDPOINTS.has(to.path)
    // A page (or an interaction of the provider's) reads the instance's settings: read by the first.
    const settling = page ? this.pool.settle(instance) : undefined
    if (settling) await settling
    // Set first so oidc-provider can add its inline scripts' hashes to a page's (see IDENTITY_CSP;
    // `csp` is it, with the brand's style). The JSON endpoints answer no page: the document policy.
    res.setHeader('content-security-policy', page ? instance.csp : DOCUMENT_CSP)
    // The shared Provider reads the instance from here on. Every page it draws (device code, logout,
    // its errors) wears the instance's brand; the JSON endpoints are no page.
    await serving(instance, () =>
      page ? drawnWithBrand(instance.brand, () => instance.callback(req, res)) : instance.callback(req, res),
    )
  }

  /**
   * Runs a hosted page (or a feature's endpoint) as the instance: its settings read (by the first
   * request that needs them), the shared Provider scoped to it, its brand on every page drawn, and
   * its page policy (which allows its brand's style).
   */
  private async inInstance(instance: Instance, answer: () => Promise<Response>): Promise<Response> {
    const settling = this.pool.settle(instance)
    if (settling) await settling
    const response = await serving(instance, () => drawnWithBrand(instance.brand, answer))
    // An answer with a policy of its own (a logo's) keeps it.
    if (!response.headers.has('content-security-policy'))
      response.headers.set('content-security-policy', instance.csp)
    return response
  }

  /**
   * Forgets what this process holds about an instance: cached discovery/JWKS, its loaded record (with
   * the clients it memoized), its state. Null: about every instance (a change may have been missed).
   */
  invalidate(instanceId: string | null): void {
    if (instanceId === null) {
      this.cache.clear()
      this.pool.evictAll()
      return
    }
    this.cache.delete(instanceId)
    this.pool.evict(instanceId)
  }
}

/**
 * The scheme and host of every issuer the template makes, without making the issuer per request:
 * the host is fixed unless the template puts the instance id in it.
 */
function forwardedHeaders(template: string): (instanceId: string) => { proto: string; host: string } {
  const scheme = template.indexOf('://')
  const proto = template.slice(0, scheme)
  const hostOf = template.slice(scheme + 3).split('/', 1)[0]!
  if (!hostOf.includes('{workspace_id}')) {
    const fixed = { proto, host: hostOf }
    return () => fixed
  }
  return (instanceId) => ({ proto, host: hostOf.replace('{workspace_id}', instanceId) })
}

/** The path below the issuer's prefix: the one place it is cut off. */
const subPath = (pathname: string, target: InstanceTarget) => pathname.slice(target.prefix.length) || '/'

/** Bodies sent to an identity instance are forms and small JSON; oidc-provider itself stops at 56 KiB. */
const BODY_LIMIT = 64 * 1024
const TOO_LARGE = Symbol('too large')

async function readBody(
  request: Request,
  length: string | undefined,
): Promise<Uint8Array | typeof TOO_LARGE> {
  if (length !== undefined) {
    // Known length (the usual case): Bun reads it natively, far cheaper than pulling the stream.
    // A Buffer over the bytes read, no copy: what the provider's body parser is handed (inject).
    return Number(length) > BODY_LIMIT ? TOO_LARGE : Buffer.from(await request.arrayBuffer())
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
