import { withBackoff } from '../shared/backoff'
import { EXIT, type ExitCode } from './exit-codes'

/** Where a call's bearer token comes from: a person's stored login, or a machine key's exchange. */
export interface TokenSource {
  /** A token valid now (refreshed or exchanged again when it is about to expire). */
  token(): Promise<string>
  /** What the caller is, for messages ("key mk_… from ./key.json", "alice@example.com"). */
  describe(): string
}

/** An answer of the control plane other than 2xx, as the API described it (`detail`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path}: ${status} ${ApiError.text(detail)}`)
  }

  /** FastAPI's shapes: a string, or a list of `{loc, msg}` (422). */
  static text(detail: unknown): string {
    if (typeof detail === 'string') return detail
    if (Array.isArray(detail))
      return detail
        .map(
          (d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).slice(1).join('.') || 'body'}: ${d.msg}`,
        )
        .join('; ')
    return JSON.stringify(detail)
  }

  /** The exit code a script reads (0 never). */
  get exitCode(): ExitCode {
    if (this.status === 401) return EXIT.NOT_AUTHENTICATED
    if (this.status === 404) return EXIT.NOT_FOUND
    if (this.status === 429) return EXIT.RATE_LIMITED
    return EXIT.ERROR
  }
}

interface ApiClientOptions {
  baseUrl: string
  auth: TokenSource | null
  /** Tries in all on 429/503 (SPEC's backoff between them); the last answer stands. */
  attempts?: number
  /** Waits between tries (tests turn time instead of sleeping). */
  sleep?: (ms: number) => Promise<void>
  fetch?: typeof fetch
}

/**
 * The control plane's JSON API as the CLI and the MCP server call it: the bearer token of `auth`,
 * SPEC's backoff on 429 and 503 (1, 2, 4 … 30 s, ±20%, or Retry-After), and every non-2xx answer
 * thrown as ApiError. One client for both.
 */
export class ApiClient {
  readonly baseUrl: string
  private readonly fetch: typeof fetch

  constructor(private readonly opts: ApiClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '')
    this.fetch = opts.fetch ?? fetch
  }

  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await withBackoff(
      async () => {
        if (this.opts.auth) headers.authorization = `Bearer ${await this.opts.auth.token()}`
        return this.fetch(`${this.baseUrl}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      },
      { attempts: this.opts.attempts, sleep: this.opts.sleep },
    )
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {}
    if (!res.ok) {
      const detail = (parsed as { detail?: unknown } | null)?.detail ?? parsed
      throw new ApiError(res.status, detail, method, path)
    }
    return parsed as T
  }

  get<T = unknown>(path: string) {
    return this.request<T>('GET', path)
  }
  post<T = unknown>(path: string, body?: unknown) {
    return this.request<T>('POST', path, body)
  }
  patch<T = unknown>(path: string, body: unknown) {
    return this.request<T>('PATCH', path, body)
  }
  delete<T = unknown>(path: string, body?: unknown) {
    return this.request<T>('DELETE', path, body)
  }
}
