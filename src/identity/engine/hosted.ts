import { Elysia } from 'elysia'
import type { KoaContextWithOIDC } from 'oidc-provider'
import { appError } from '../../shared/errors'
import { html } from '../../shared/views/respond'
import { IDENTITY_ERRORS } from '../error-codes'
import { nodePair } from './inject'
import type { Instance } from './pool'

/** What a hosted page knows of the request it answers, set by the bridge before the page runs. */
export interface HostedRequest {
  instance: Instance
  /** Path prefix of the instance (`/i/<id>`, or '' on a host-based issuer), for links the browser follows. */
  prefix: string
  /** The path below the prefix, and the URL's search, as the client sent them. */
  path: string
  search: string
  /** The client address (the peer, or past trusted proxies); resolved on first read. */
  clientIp(): string
}

/**
 * One request to a hosted page, as every page flow reads it. A flow answers a `Response` (HTML with
 * `hostedHtml`, a redirect with `seeOther`) and refuses with an AppError; it never writes.
 */
export interface PageRequest {
  instance: Instance
  /** Path prefix of the instance (`/i/<id>`), for links the browser follows. */
  prefix: string
  /** Path below the prefix. */
  path: string
  query: URLSearchParams
  /** The client address, resolved on first read. */
  readonly clientIp: string
  method: string
  headers: Headers
  /** oidc-provider's interaction of this browser (its cookie). */
  interaction: InteractionPort
}

/**
 * A hosted page's request. Its form is not in it: a route declares the form it takes (TypeBox), and
 * its flow is handed the checked values.
 */
export function pageRequest(hosted: HostedRequest, request: Request): PageRequest {
  return {
    instance: hosted.instance,
    prefix: hosted.prefix,
    path: hosted.path,
    query: new URLSearchParams(hosted.search),
    get clientIp() {
      return hosted.clientIp()
    },
    method: request.method,
    headers: request.headers,
    interaction: new InteractionPort(hosted, request),
  }
}

/** Where the bridge leaves a request's HostedRequest for `hostedPage`. */
export const hostedRequests = new WeakMap<Request, HostedRequest>()

export type InteractionDetails = Awaited<ReturnType<Instance['provider']['interactionDetails']>>

/** oidc-provider's word for an interaction this browser does not hold: no cookie, or expired, or ended. */
const interactionGone = (e: unknown) => e instanceof Error && e.name === 'SessionNotFound'

/**
 * A hosted page's door to oidc-provider's interaction of this browser (its cookie). The provider's
 * helpers take node:http's pair: they are handed one made from the request, and what they decide
 * comes back as values (a details record, a URL to go on to), never as writes to a response.
 */
export class InteractionPort {
  private pair: ReturnType<typeof nodePair> | null = null

  constructor(
    private readonly hosted: HostedRequest,
    private readonly request: Request,
  ) {}

  private get provider() {
    return this.hosted.instance.provider
  }

  private node() {
    this.pair ??= nodePair({
      method: this.request.method,
      url: `${this.hosted.path}${this.hosted.search}`,
      originalUrl: new URL(this.request.url).pathname,
      headers: this.request.headers.toJSON(),
      remoteAddress: () => this.hosted.clientIp(),
    })
    return this.pair
  }

  /** The interaction this browser holds; a gone or expired one is the page's 400 (INTERACTION_EXPIRED). */
  async details(): Promise<InteractionDetails> {
    const { req, res } = this.node()
    return this.provider.interactionDetails(req, res).catch(expiredAsAppError)
  }

  /** The interaction this browser holds, or null when it has none (no cookie, expired, ended). */
  async held(): Promise<InteractionDetails | null> {
    const { req, res } = this.node()
    return this.provider.interactionDetails(req, res).catch((e) => {
      if (interactionGone(e)) return null
      throw e
    })
  }

  /** Stores the step's result in the interaction and answers where the browser goes on (the provider's resume). */
  async result(result: Record<string, unknown>, merge: boolean): Promise<string> {
    const { req, res } = this.node()
    return this.provider
      .interactionResult(req, res, result, { mergeWithLastSubmission: merge })
      .catch(expiredAsAppError)
  }

  /** Ends the interaction with `result`: the browser goes back to the provider, which answers the app. */
  async finish(result: Record<string, unknown>, merge: boolean): Promise<Response> {
    return seeOther(await this.result(result, merge))
  }

  /** The provider's session of this browser (its signed-in account, if any). */
  session() {
    return this.provider.Session.get(this.koa())
  }

  /** A cookie of the provider's, by its short name (`interaction`, `session`), signature checked. */
  cookie(name: string): string | undefined {
    return this.koa().cookies.get(this.provider.cookieName(name))
  }

  private koa(): KoaContextWithOIDC {
    const { req, res } = this.node()
    return this.provider.createContext(req, res) as KoaContextWithOIDC
  }
}

/** The provider's refusals of an interaction that is gone, as the page's error. */
function expiredAsAppError(e: unknown): never {
  if (e instanceof Error && (e.name === 'SessionNotFound' || e.name === 'InvalidRequest'))
    throw appError(IDENTITY_ERRORS.INTERACTION_EXPIRED, 400)
  throw e
}

/** A 303 to `location`, never cached: every hosted page's answer is one browser's. */
export const seeOther = (location: string) =>
  new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } })

/**
 * The start of every hosted page plugin: its routes have `hosted` (the instance and the request's
 * addressing) and `page` (the request as the page flows read it) in their context.
 */
export const hostedPage = (name: string) =>
  new Elysia({ name }).derive({ as: 'global' }, ({ request }) => {
    const hosted = hostedRequests.get(request) as HostedRequest
    return { hosted, page: pageRequest(hosted, request) }
  })

/** A hosted page's answer: HTML, never cached (it is one browser's, mid-flow). */
export const hostedHtml = (body: JSX.Element, status = 200, headers: Record<string, string> = {}) =>
  html(body, status, { 'cache-control': 'no-store', ...headers })
