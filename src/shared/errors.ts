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
    readonly loc: (string | number)[] = ['body'],
  ) {
    super(message)
    this.name = 'AppError'
  }
}

export const unauthorized = (message = 'Not authenticated', realm = 'gatehouse') =>
  new AppError('UNAUTHORIZED', 401, message, { 'WWW-Authenticate': `Bearer realm="${realm}"` })
export const forbidden = (message = 'Not allowed') => new AppError('FORBIDDEN', 403, message)
export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', 404, `${what} not found`)
export const conflict = (message: string) => new AppError('CONFLICT', 409, message)
export const badRequest = (code: string, message: string) => new AppError(code, 400, message)
/** A business-rule rejection of a well-formed request, in the FastAPI 422 shape via the errors plugin. */
export const unprocessable = (code: string, message: string, loc: (string | number)[] = ['body']) =>
  new AppError(code, 422, message, {}, loc)
