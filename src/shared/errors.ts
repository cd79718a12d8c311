/** Where in a request a problem is (FastAPI `loc`): `['body', 'redirect_uris', 1]`. */
export type Loc = (string | number)[]

/**
 * The one error type. Services throw it; the errors plugin renders it as `{"detail": message}`
 * for the JSON API and as an HTML fragment for the dashboard. `code` is stable for callers and tests.
 */
export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** For 422: where in the request the problem is (FastAPI `loc`). */
    readonly loc: Loc = ['body'],
  ) {
    super(message)
    this.name = 'AppError'
  }
}

export const unauthorized = (message = 'Not authenticated', realm = 'gatehouse') =>
  new AppError('UNAUTHORIZED', 401, message, { 'WWW-Authenticate': `Bearer realm="${realm}"` })
export const forbidden = (message = 'Not allowed') => new AppError('FORBIDDEN', 403, message)
export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', 404, `${what} not found`)

/** A stable error code and the message a person reads for it. */
export interface ErrorCode<C extends string = string> {
  readonly code: C
  readonly message: string
}

/**
 * The error codes of a feature, each with its message (as better-auth's `defineErrorCodes`):
 * `defineErrorCodes({ LOGIN_EXPIRED: 'This sign-in attempt expired…' })` gives
 * `{ LOGIN_EXPIRED: { code: 'LOGIN_EXPIRED', message: … } }`, thrown with `appError`. A code
 * reaches clients (a 422's `type` is the code in lower case): once shipped, it stays.
 */
export function defineErrorCodes<const T extends Record<string, string>>(
  messages: T,
): { readonly [K in keyof T & string]: ErrorCode<K> } {
  return Object.fromEntries(Object.entries(messages).map(([code, message]) => [code, { code, message }])) as {
    [K in keyof T & string]: ErrorCode<K>
  }
}

/**
 * The AppError of a defined code, its status given where it is thrown. `message` replaces the
 * code's own when the reason is more specific (which redirect URI rule failed).
 */
export const appError = (
  error: ErrorCode,
  status: number,
  opts: { loc?: Loc; message?: string; headers?: Record<string, string> } = {},
) => new AppError(error.code, status, opts.message ?? error.message, opts.headers, opts.loc)
