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
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown

export interface InjectRequest {
  method: string
  /** Path and query, as node:http puts it in `req.url`. */
  url: string
  /** The path and query the client sent, when `url` is below a mount point (Koa's `originalUrl`). */
  originalUrl?: string
  /** Lower-case names, as node:http gives them; the request takes this object over. */
  headers: IncomingHttpHeaders
  body?: Uint8Array | null
  /** Address of the client, for `req.socket.remoteAddress`. */
  remoteAddress: string
}

class InjectedSocket extends EventEmitter {
  readonly encrypted = false
  readonly writable = true
  constructor(readonly remoteAddress: string) {
    super()
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
    return body && Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  }
}

export type HeaderValue = number | string | string[]

/**
 * Called once the handler ends its response, with its status and headers (lower-case names), to
 * add headers of the caller's own before the one `Response` is made (the bridge's request id and
 * security headers): nothing is set on a `Response` after it is built.
 */
export type Finish = (status: number, headers: Map<string, HeaderValue>) => void

class InjectedResponse extends EventEmitter {
  statusCode = 200
  statusMessage = ''
  headersSent = false
  writableEnded = false
  finished = false
  readonly socket = null
  private readonly headerMap = new Map<string, HeaderValue>()
  /** Strings stay strings (Koa ends with its JSON text): they are encoded once, by the Response. */
  private readonly chunks: (string | Buffer)[] = []

  constructor(
    private readonly done: (response: Response) => void,
    private readonly finish?: Finish,
  ) {
    super()
  }

  setHeader(name: string, value: HeaderValue): this {
    this.headerMap.set(name.toLowerCase(), value)
    return this
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.headerMap.get(name.toLowerCase())
  }

  hasHeader(name: string): boolean {
    return this.headerMap.has(name.toLowerCase())
  }

  removeHeader(name: string): void {
    this.headerMap.delete(name.toLowerCase())
  }

  getHeaderNames(): string[] {
    return [...this.headerMap.keys()]
  }

  getHeaders(): Record<string, HeaderValue> {
    return Object.fromEntries(this.headerMap)
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
    this.finish?.(status, this.headerMap)
    const empty = status === 204 || status === 304 || this.chunks.length === 0
    const body = empty ? null : (this.body() as string | Uint8Array<ArrayBuffer>)
    this.done(new Response(body, { status, headers: headersOf(this.headerMap) }))
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
    if (this.chunks.length === 1 && (typeof first !== 'string' || this.headerMap.has('content-type')))
      return first as string | Buffer
    return Buffer.concat(this.chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)))
  }
}

/** A plain object (the cheapest init for Bun), unless a header repeats (Set-Cookie). */
function headersOf(map: Map<string, HeaderValue>): HeadersInit {
  let repeated = false
  const init: Record<string, string> = {}
  for (const [name, value] of map) {
    if (Array.isArray(value)) repeated = true
    else init[name] = String(value)
  }
  if (!repeated) return init
  const headers = new Headers(init)
  for (const [name, value] of map) if (Array.isArray(value)) for (const v of value) headers.append(name, v)
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
