import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'
import { Elysia, type ValidationError } from 'elysia'
import { isStoreUnavailable, loggable } from '../../db/store'
import { AppError } from '../errors'
import type { Logger } from '../logger'
import { dashboardError } from '../views/error-page'
import { MessagePage } from '../views/hosted-layout'

/** One entry of a FastAPI-style `HTTPValidationError.detail`. */
interface ValidationDetail {
  loc: (string | number)[]
  msg: string
  type: string
}

// FastAPI (pydantic v2) names for the failures TypeBox reports, so clients see familiar types.
const TYPE_NAMES: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.ObjectRequiredProperty]: 'missing',
  [ValueErrorType.StringMinLength]: 'string_too_short',
  [ValueErrorType.StringMaxLength]: 'string_too_long',
  [ValueErrorType.StringPattern]: 'string_pattern_mismatch',
  [ValueErrorType.StringFormat]: 'value_error',
  [ValueErrorType.String]: 'string_type',
  [ValueErrorType.ArrayMinItems]: 'too_short',
  [ValueErrorType.ArrayMaxItems]: 'too_long',
  [ValueErrorType.Array]: 'list_type',
  [ValueErrorType.Boolean]: 'bool_type',
  [ValueErrorType.Integer]: 'int_type',
  [ValueErrorType.Number]: 'float_type',
  [ValueErrorType.Object]: 'model_type',
  [ValueErrorType.ObjectAdditionalProperties]: 'extra_forbidden',
  [ValueErrorType.Literal]: 'literal_error',
  [ValueErrorType.Union]: 'union_tag_invalid',
  [ValueErrorType.IntegerMinimum]: 'greater_than_equal',
  [ValueErrorType.IntegerMaximum]: 'less_than_equal',
  [ValueErrorType.NumberMinimum]: 'greater_than_equal',
  [ValueErrorType.NumberMaximum]: 'less_than_equal',
}

const segment = (s: string) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~'))

/** `loc: [where, ...path]`, deduplicated by loc (t.Integer/t.Numeric report a field twice). */
function validationDetails(error: Readonly<ValidationError>): ValidationDetail[] {
  return valueErrorDetails(error.all, [error.type === 'params' ? 'path' : error.type])
}

/**
 * TypeBox's failures (`Value.Errors`, or a ValidationError's `all`) as 422 details at `[...at,
 * ...path]`: what a request answers, and what one item of a batch reports.
 */
export function valueErrorDetails(errors: Iterable<object>, at: (string | number)[]): ValidationDetail[] {
  const seen = new Map<string, number>()
  const out: ValidationDetail[] = []
  for (const e of errors) {
    if (!('path' in e)) continue
    const { path, value, type, schema } = e as ValueError
    // A union says nothing useful of itself ("Expected union value"): its own message, when it has one.
    const message =
      type === ValueErrorType.Union
        ? ((schema.errorMessage as { anyOf?: string } | undefined)?.anyOf ?? (e as ValueError).message)
        : (e as ValueError).message
    const loc = [...at, ...path.split('/').filter(Boolean).map(segment)]
    const key = JSON.stringify(loc)
    // An absent field fails its type check; report it as FastAPI does.
    const absent = value === undefined && type !== ValueErrorType.ObjectRequiredProperty
    const detail = absent
      ? { loc, msg: 'Field required', type: 'missing' }
      : { loc, msg: message, type: TYPE_NAMES[type] ?? 'value_error' }
    const index = seen.get(key)
    // A missing field also fails its type check; "missing" is the one worth reporting.
    if (index === undefined) seen.set(key, out.push(detail) - 1)
    else if (detail.type === 'missing') out[index] = detail
  }
  if (out.length === 0) out.push({ loc: at, msg: 'Invalid input', type: 'value_error' })
  return out
}

/** The rate limiter's headers the guard set before the error: they belong on every counted answer. */
const rateLimitHeadersOf = (headers: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => name.startsWith('x-ratelimit-'))
      .map(([name, value]) => [name, String(value)]),
  )

/** The heading of a hosted page's error, by its status; a refused step of a sign-in otherwise. */
const HOSTED_TITLES: Record<number, string> = {
  401: 'Sign in first',
  403: 'Not allowed',
  404: 'Not found',
  413: 'Request too large',
  422: 'Check the form',
  429: 'Too many requests',
  500: 'Something went wrong',
  503: 'Temporarily unavailable',
}

/**
 * Where the errors are answered: the control plane and the features' endpoints under an instance
 * (JSON for the API, pages and fragments for the dashboard), or an instance's hosted pages (a page).
 */
export type ErrorSurface = 'control' | 'hosted'

/**
 * The one place errors become responses. Validation → 422 `{"detail":[{loc,msg,type}]}`;
 * malformed JSON → 422 `json_invalid`; AppError → its status and `{"detail": message}`; the
 * database out of reach → 503; anything else → 500 with a generic message (the stack goes to the log, never the client).
 */
export const errorsPlugin = (log: Logger, surface: ErrorSurface = 'control') =>
  new Elysia({ name: 'errors', seed: surface }).onError({ as: 'global' }, ({ code, error, request, set }) => {
    const url = new URL(request.url)
    const htmx = request.headers.get('hx-request') === 'true'
    // The dashboard answers in HTML: a page, or a fragment for htmx; signed-out users go to login.
    const dashboard = surface === 'control' && url.pathname.startsWith('/app/')
    // A hosted page's failure is a page of the instance's look, whoever asked.
    const hosted = surface === 'hosted'
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      // Recorded for the access log, which reads the status after the response is sent.
      set.status = status
      const counted = rateLimitHeadersOf(set.headers)
      if (!dashboard && !hosted) return Response.json(body, { status, headers: { ...counted, ...headers } })
      const detail = (body as { detail: unknown }).detail
      const message =
        typeof detail === 'string' ? detail : 'Some fields are not valid. Check them and try again.'
      if (hosted) {
        const title = HOSTED_TITLES[status] ?? 'Sign-in interrupted'
        // A failure of ours is said in general terms: its detail is in the log.
        const said = status === 500 ? 'Something went wrong. Try again.' : message
        return new Response(MessagePage({ title, message: said }), {
          status,
          headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers },
        })
      }
      if (status === 401) {
        const login = `/v1/auth/login?next=${encodeURIComponent(url.pathname + url.search)}`
        if (htmx) return new Response(null, { status: 401, headers: { 'hx-redirect': login } })
        set.status = 303
        return new Response(null, { status: 303, headers: { location: login } })
      }
      // A dashboard write's 429 keeps its Retry-After and X-RateLimit-* headers, as the API's does.
      return new Response(dashboardError(status, message, htmx), {
        status,
        headers: { 'content-type': 'text/html; charset=utf-8', ...counted, ...headers },
      })
    }
    if (code === 'VALIDATION') {
      if (error.type === 'response') {
        log.error('response failed its schema', { path: new URL(request.url).pathname, error: error.message })
        return json(500, { detail: 'Internal Server Error' })
      }
      return json(422, { detail: validationDetails(error) })
    }
    if (code === 'PARSE') {
      return json(422, {
        detail: [{ loc: ['body'], msg: 'Request body is not valid JSON', type: 'json_invalid' }],
      })
    }
    if (error instanceof AppError) {
      if (error.status === 422) {
        return json(422, { detail: [{ loc: error.loc, msg: error.message, type: error.code.toLowerCase() }] })
      }
      return json(error.status, { detail: error.message }, error.headers)
    }
    if (code === 'NOT_FOUND') return json(404, { detail: 'Not Found' })
    if (code === 'INVALID_COOKIE_SIGNATURE') return json(400, { detail: 'Invalid cookie' })
    if (isStoreUnavailable(error)) {
      // Not a bug: the database is down or restarting. Requests recover with it; no stack.
      log.warn('database unavailable', { path: url.pathname, error: loggable(error).error })
      return json(
        503,
        { detail: 'The service is temporarily unavailable. Try again shortly.' },
        { 'retry-after': '5' },
      )
    }
    log.error('unhandled error', {
      path: new URL(request.url).pathname,
      ...loggable(error),
    })
    return json(500, { detail: 'Internal Server Error' })
  })
