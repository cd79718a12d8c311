import { Elysia } from 'elysia'
import { AppError } from '../errors'

/** The control plane's largest request body: JSON and forms are far smaller. */
const BODY_LIMIT_BYTES = 1024 * 1024

const tooLarge = (limit: number) =>
  // The rest of the body is not read: close the connection rather than drain it.
  new AppError('BODY_TOO_LARGE', 413, `Request body too large (the limit is ${limit} bytes)`, {
    connection: 'close',
  })

/** Whether a stream holds more than `limit` bytes; reading stops as soon as it does. */
async function exceeds(stream: ReadableStream<Uint8Array>, limit: number): Promise<boolean> {
  const reader = stream.getReader()
  let size = 0
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.byteLength
    if (size > limit) {
      // Not awaited: cancelling one branch of a tee'd body waits for the other branch's reader.
      void reader.cancel()
      return true
    }
  }
  return false
}

/** A route that takes more than the control plane's megabyte (an upload): its path and its own cap. */
export interface BodyLimit {
  path: RegExp
  bytes: number
}

function limitOf(url: string, larger: BodyLimit[], base: number): number {
  const path = new URL(url).pathname
  return larger.find((l) => l.path.test(path))?.bytes ?? base
}

/**
 * Caps request bodies before anything parses them, answering 413 in the API's error shape (Bun's
 * own `maxRequestBodySize` answers an empty 413, so it stays a looser outer bound). A declared
 * Content-Length is checked as is; a chunked body is counted on a clone (a tee: the route still
 * reads the original), so at most `limit` bytes are buffered before the request is refused.
 */
export const bodyLimitPlugin = (larger: BodyLimit[] = [], base = BODY_LIMIT_BYTES) =>
  new Elysia({ name: 'body-limit' }).onRequest(async ({ request }) => {
    const limit = larger.length ? limitOf(request.url, larger, base) : base
    const length = request.headers.get('content-length')
    if (length !== null) {
      if (!(Number(length) <= limit)) throw tooLarge(limit)
      return
    }
    if (request.body && (await exceeds(request.clone().body as ReadableStream<Uint8Array>, limit)))
      throw tooLarge(limit)
  })
