import { EventEmitter } from 'node:events'
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'

/**
 * Hands a fetch `Request` to a node:http handler (oidc-provider's Koa app) inside this process and
 * turns what the handler writes into a fetch `Response`, without a second HTTP hop: no socket, no
 * re-parsing. Only the node:http surface Koa, `cookies` and oidc-provider use is implemented; the
 * request is a real Readable so body parsers can iterate it.
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
    if (this.body) {
      this.push(Buffer.from(this.body.buffer, this.body.byteOffset, this.body.byteLength))
      this.body = null
    }
    this.push(null)
  }
}

type HeaderValue = number | string | string[]

class InjectedResponse extends EventEmitter {
  statusCode = 200
  statusMessage = ''
  headersSent = false
  writableEnded = false
  finished = false
  readonly socket = null
  private readonly headerMap = new Map<string, HeaderValue>()
  private readonly chunks: Buffer[] = []

  constructor(private readonly done: (response: Response) => void) {
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
    this.chunks.push(
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8')
        : Buffer.from(chunk),
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
    const headers = new Headers()
    for (const [name, value] of this.headerMap) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v)
      else headers.set(name, String(value))
    }
    const status = this.statusCode
    const empty = status === 204 || status === 304 || this.chunks.length === 0
    const body = empty ? null : this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)
    this.done(new Response(body as Uint8Array<ArrayBuffer> | null, { status, headers }))
    process.nextTick(() => {
      this.emit('finish')
      cb?.()
    })
    return this
  }
}

/** Runs `handler` on the request and resolves with the response it writes. */
export function inject(handler: NodeHandler, request: InjectRequest): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const req = new InjectedRequest(request) as unknown as IncomingMessage
    const res = new InjectedResponse(resolve) as unknown as ServerResponse
    try {
      const result = handler(req, res)
      if (result instanceof Promise) result.catch(reject)
    } catch (e) {
      reject(e)
    }
  })
}
