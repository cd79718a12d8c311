import { EventEmitter } from 'node:events'
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'

/**
 * Hands a fetch `Request` to a node:http handler (oidc-provider's Koa app) inside this process and
 * turns what the handler writes into a fetch `Response`, without a second HTTP hop: no socket, no
 * re-parsing. Only the node:http surface Koa, `cookies` and oidc-provider use is implemented; the
 * request is a real Readable so body parsers can iterate it. This runs on every token request, so
 * each byte crosses once: the body is buffered before and handed over in one chunk, and the
 * response's headers and body go into one `Response` with whatever the caller adds (`finish`).
 */
type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown

interface InjectRequest {
  method: string
  /** Path and query, as node:http puts it in `req.url`. */
  url: string
  /** The path and query the client sent, when `url` is below a mount point (Koa's `originalUrl`). */
  originalUrl?: string
  /** Lower-case names, as node:http gives them; the request takes this object over. */
  headers: IncomingHttpHeaders
  body?: Uint8Array | null
  /**
   * Address of the client, for `req.socket.remoteAddress`; a function is asked on first read only
   * (the token path never reads it, and resolving it asks the server for the peer).
   */
  remoteAddress: string | (() => string)
}

class InjectedSocket extends EventEmitter {
  readonly encrypted = false
  readonly writable = true
  constructor(private address: string | (() => string)) {
    super()
  }

  get remoteAddress(): string {
    if (typeof this.address === 'function') this.address = this.address()
    return this.address
  }
}

class InjectedRequest extends Readable {
  readonly httpVersion = '1.1'
  readonly httpVersionMajor = 1
  readonly httpVersionMinor = 1
  readonly method: string
  url: string
  originalUrl?: string
  readonly headers: IncomingHttpHeaders
  readonly socket: InjectedSocket
  private body: Uint8Array | null

  constructor(r: InjectRequest) {
    super()
    this.method = r.method
    this.url = r.url
    this.originalUrl = r.originalUrl
    this.body = r.body && r.body.byteLength > 0 ? r.body : null
    const headers = r.headers
    // The body is already buffered: its length is known, whatever framing the client used.
    delete headers['transfer-encoding']
    if (this.body) headers['content-length'] = String(this.body.byteLength)
    else if (r.method !== 'GET' && r.method !== 'HEAD') headers['content-length'] = '0'
    this.headers = headers
    this.socket = new InjectedSocket(r.remoteAddress)
  }

  get connection() {
    return this.socket
  }

  override _read(): void {
    const body = this.takeBody()
    if (body) this.push(body)
    this.push(null)
  }

  /**
   * oidc-provider (`req.iterator()`) and the hosted pages (`for await`) read a body by iterating
   * it: the buffered body is handed over as its one chunk, without a trip through the stream's
   * machinery (its async iterator, end-of-stream and destroy hooks cost more than the rest of the
   * hand-over). The stream is consumed as reading it would consume it.
   */
  override iterator(): NodeJS.AsyncIterator<Buffer> {
    return this.chunks()
  }

  override [Symbol.asyncIterator](): NodeJS.AsyncIterator<Buffer> {
    return this.chunks()
  }

  private async *chunks(): AsyncGenerator<Buffer> {
    const body = this.takeBody()
    if (body) yield body
  }

  /** The body, once: a view of the caller's bytes, not a copy. */
  private takeBody(): Buffer | null {
    const body = this.body
    this.body = null
    if (!body || Buffer.isBuffer(body)) return body
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  }
}

type HeaderValue = number | string | string[]

/** The response's headers as `finish` reads and adds to them (names in lower case). */
interface ResponseHeaders {
  has(name: string): boolean
  get(name: string): HeaderValue | undefined
  set(name: string, value: string): unknown
}

/**
 * Called once the handler ends its response, with its status and headers, to add headers of the
 * caller's own before the one `Response` is made (the bridge's request id and security headers):
 * nothing is set on a `Response` after it is built.
 */
export type Finish = (status: number, headers: ResponseHeaders) => void

class InjectedResponse extends EventEmitter {
  statusCode = 200
  statusMessage = ''
  headersSent = false
  writableEnded = false
  finished = false
  readonly socket = null
  /**
   * The headers by lower-case name, in a plain object: with no header repeated (Set-Cookie), it is
   * the `Response`'s init as it is, the cheapest Bun takes, without a copy.
   */
  private readonly headerMap: Record<string, HeaderValue> = Object.create(null)
  /** Whether a header was ever given several values: the one case the object is not the init. */
  private repeated = false
  /** Strings stay strings (Koa ends with its JSON text): they are encoded once, by the Response. */
  private readonly chunks: (string | Buffer)[] = []

  constructor(
    private readonly done: (response: Response) => void,
    private readonly finish?: Finish,
  ) {
    super()
  }

  setHeader(name: string, value: HeaderValue): this {
    if (Array.isArray(value)) this.repeated = true
    this.headerMap[lowerCase(name)] = value
    return this
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.headerMap[lowerCase(name)]
  }

  hasHeader(name: string): boolean {
    return lowerCase(name) in this.headerMap
  }

  removeHeader(name: string): void {
    delete this.headerMap[lowerCase(name)]
  }

  getHeaderNames(): string[] {
    return Object.keys(this.headerMap)
  }

  getHeaders(): Record<string, HeaderValue> {
    return { ...this.headerMap }
  }

  writeHead(
    status: number,
    message?: string | Record<string, OutgoingHttpHeader> | OutgoingHttpHeader[],
    headers?: Record<string, OutgoingHttpHeader>,
  ): this {
    this.statusCode = status
    const extra = typeof message === 'string' ? headers : message
    if (typeof message === 'string') this.statusMessage = message
    if (extra && !Array.isArray(extra)) {
      for (const [name, value] of Object.entries(extra)) if (value !== undefined) this.setHeader(name, value)
    }
    this.headersSent = true
    return this
  }

  flushHeaders(): void {
    this.headersSent = true
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | (() => void), cb?: () => void): boolean {
    this.headersSent = true
    const utf8 = typeof encoding !== 'string' || encoding === 'utf8' || encoding === 'utf-8'
    this.chunks.push(
      typeof chunk === 'string'
        ? utf8
          ? chunk
          : Buffer.from(chunk, encoding)
        : // A copy: a writer may reuse its buffer once write() returns.
          Buffer.from(chunk),
    )
    const callback = typeof encoding === 'function' ? encoding : cb
    if (callback) queueMicrotask(callback)
    return true
  }

  end(
    chunk?: string | Uint8Array | (() => void),
    encoding?: BufferEncoding | (() => void),
    cb?: () => void,
  ): this {
    if (this.writableEnded) return this
    if (typeof chunk === 'function') cb = chunk
    else if (chunk !== undefined && chunk !== null) this.write(chunk, encoding)
    if (typeof encoding === 'function') cb = encoding
    this.headersSent = true
    this.writableEnded = true
    this.finished = true
    const status = this.statusCode
    this.finish?.(status, new HeaderRecord(this.headerMap))
    const empty = status === 204 || status === 304 || this.chunks.length === 0
    const body = empty ? null : (this.body() as string | Uint8Array<ArrayBuffer>)
    // Numbers (a Content-Length) are made strings by the init itself, as node:http writes them.
    const headers = this.repeated ? headersOf(this.headerMap) : (this.headerMap as Record<string, string>)
    this.done(new Response(body, { status, headers }))
    process.nextTick(() => {
      this.emit('finish')
      cb?.()
    })
    return this
  }

  /**
   * One string is given to the Response as it is, unless there is no Content-Type: a string body
   * would get Bun's text/plain, which node:http never adds.
   */
  private body(): string | Buffer {
    const [first] = this.chunks
    if (this.chunks.length === 1 && (typeof first !== 'string' || 'content-type' in this.headerMap))
      return first as string | Buffer
    return Buffer.concat(this.chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)))
  }
}

/**
 * Header names in lower case, by the name as given: Koa and oidc-provider name the same few
 * headers (`Content-Type`…) dozens of times a response, and a name lowered anew is a new string,
 * which a property lookup must intern before it can use it (~0.1 us a call). The names come from
 * code, not from requests; past NAMES_KEPT the memo stops growing.
 */
const lowerNames = new Map<string, string>()
const NAMES_KEPT = 512

function lowerCase(name: string): string {
  let lower = lowerNames.get(name)
  if (lower === undefined) {
    lower = name.toLowerCase()
    if (lowerNames.size < NAMES_KEPT) lowerNames.set(name, lower)
  }
  return lower
}

/**
 * `finish`'s view of the headers (names already in lower case). Apart from the response: a `set`
 * method on it would make the `cookies` package take it for Express's and write Set-Cookie with
 * node:http's own setHeader.
 */
class HeaderRecord implements ResponseHeaders {
  constructor(private readonly record: Record<string, HeaderValue>) {}
  has(name: string): boolean {
    return name in this.record
  }
  get(name: string): HeaderValue | undefined {
    return this.record[name]
  }
  set(name: string, value: string): void {
    this.record[name] = value
  }
}

/** The init of a response with a header given several values (Set-Cookie): each one appended. */
function headersOf(record: Record<string, HeaderValue>): Headers {
  const headers = new Headers()
  for (const name in record) {
    const value = record[name]!
    if (Array.isArray(value)) for (const v of value) headers.append(name, v)
    else headers.set(name, String(value))
  }
  return headers
}

/**
 * Runs `handler` on the request and resolves with the response it writes; `finish` adds headers
 * to it before it is built.
 */
export function inject(handler: NodeHandler, request: InjectRequest, finish?: Finish): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const req = new InjectedRequest(request) as unknown as IncomingMessage
    const res = new InjectedResponse(resolve, finish) as unknown as ServerResponse
    try {
      const result = handler(req, res)
      if (result instanceof Promise) result.catch(reject)
    } catch (e) {
      reject(e)
    }
  })
}

/**
 * A request's node:http pair without a handler: what oidc-provider's interaction helpers
 * (`interactionDetails`, `interactionResult`, `createContext`) read a hosted page's cookies from. What
 * they would write to the response (a stale cookie signature's removal) is not sent: the page answers.
 */
export function nodePair(request: InjectRequest): { req: IncomingMessage; res: ServerResponse } {
  return {
    req: new InjectedRequest(request) as unknown as IncomingMessage,
    res: new InjectedResponse(() => {}) as unknown as ServerResponse,
  }
}
