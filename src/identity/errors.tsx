import type { ServerResponse } from 'node:http'
import type { Decision } from '../limits/decision'
import { prefersHtml } from '../shared/accept'
import { MessagePage, type PageLink } from '../shared/views/hosted-layout'

/** An error of the identity plane, whoever meets it: the front door, a hosted page, oidc-provider. */
export interface IdentityError {
  status: number
  title: string
  message: string
  /**
   * What a caller that is not a browser gets (RFC 6749 §5.2 `error`/`error_description` for the
   * protocol endpoints). Without it the answer is always the page: the hosted pages' errors.
   */
  json?: Record<string, string>
  /** Where a browser goes on from here. */
  link?: PageLink
}

interface ErrorAnswer {
  status: number
  type: string
  body: string
}

/** The one rendering of every identity error: a page for a browser, else JSON when the error has one. */
export function renderIdentityError(error: IdentityError, accept = ''): ErrorAnswer {
  if (error.json && !prefersHtml(accept)) {
    return { status: error.status, type: 'application/json', body: JSON.stringify(error.json) }
  }
  return { status: error.status, type: 'text/html; charset=utf-8', body: MessagePage(error) }
}

export function errorResponse(error: IdentityError, accept: string): Response {
  const answer = renderIdentityError(error, accept)
  return new Response(answer.body, { status: answer.status, headers: { 'content-type': answer.type } })
}

/** For the node:http side of the plane (the dispatcher, the hosted pages). */
export function writeError(res: ServerResponse, error: IdentityError, accept = ''): void {
  const answer = renderIdentityError(error, accept)
  res.writeHead(answer.status, { 'content-type': answer.type, 'cache-control': 'no-store' })
  res.end(answer.body)
}

/** For oidc-provider's Koa context (its error handler, its page sources). */
export function setError(
  ctx: { status: number; type: string; body: unknown },
  error: IdentityError,
  accept = '',
): void {
  const answer = renderIdentityError(error, accept)
  ctx.status = answer.status
  ctx.type = answer.type
  ctx.body = answer.body
}

// The front door's own errors, before oidc-provider or a page has the request.

/** No identity instance at this address (unknown, or its workspace is not active). */
export const INSTANCE_NOT_FOUND: IdentityError = {
  status: 404,
  title: 'Not found',
  message: 'There is no identity instance at this address.',
  json: { detail: 'Identity instance not found' },
}

export const BODY_TOO_LARGE: IdentityError = {
  status: 413,
  title: 'Request too large',
  message: 'The request is larger than this page accepts.',
  json: { detail: 'Request body too large' },
}

/** The database is out of reach (PostgreSQL down or restarting): the request may be tried again. */
export const STORE_UNAVAILABLE: IdentityError = {
  status: 503,
  title: 'Temporarily unavailable',
  message: 'The service is temporarily unavailable. Try again shortly.',
  json: { detail: 'The service is temporarily unavailable. Try again shortly.' },
}

/** A failure nothing else answered; it is logged where it is caught. */
export const SERVER_ERROR: IdentityError = {
  status: 500,
  title: 'Something went wrong',
  message: 'Something went wrong. Try again.',
  json: { detail: 'Internal Server Error' },
}

/** The data plane's refusal: RFC 6749's `temporarily_unavailable` for clients, a page for browsers. */
export const rateLimitedError = (
  decision: Pick<Decision, 'name' | 'limit' | 'retryAfter'>,
): IdentityError => ({
  status: 429,
  title: 'Too many requests',
  message:
    decision.name === 'address'
      ? 'Too many requests from your network to this sign-in service right now. Try again in a few seconds.'
      : 'This sign-in service is receiving too many requests right now. Try again in a few seconds.',
  json: {
    error: 'temporarily_unavailable',
    error_description: `Rate limit reached: ${decision.limit} requests per second ${decision.name === 'address' ? 'from one client address ' : ''}for this instance. Retry in ${decision.retryAfter} s.`,
  },
})
