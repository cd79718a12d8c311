import type { LogLevel } from '../config'

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export type LogFields = Record<string, unknown>

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  /**
   * The access-log line of a request, at info: `{"time","level","msg":"request","request_id",
   * "method","path","status","duration_ms"}`, as `info('request', fields)` would write it, but built
   * in one template (one per request; an object and its stringifying cost more than the rest of a
   * cached answer). An undefined id or duration is left out, as JSON.stringify leaves it out.
   */
  request(id: string | undefined, method: string, path: string, status: number, durationMs?: number): void
}

export type LogSink = (line: string) => void

/** How long a line may wait for others before it is written, and how much may wait. */
const FLUSH_MS = 10
const FLUSH_BYTES = 64 * 1024

/**
 * Lines are batched and written every few milliseconds (or sooner, once a batch is large): under
 * load one write carries hundreds of access-log lines instead of the few a macrotask sees, which
 * kept a write per handful of requests on the hot path. A line is never held longer than
 * FLUSH_MS, and what is pending is written on exit.
 */
function bufferedStdout(): LogSink {
  let pending: string[] = []
  let bytes = 0
  let timer: ReturnType<typeof setTimeout> | null = null
  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = null
    const chunk = pending.join('')
    pending = []
    bytes = 0
    process.stdout.write(chunk)
  }
  process.on('exit', () => pending.length && flush())
  return (line) => {
    pending.push(line)
    bytes += line.length
    if (bytes >= FLUSH_BYTES) flush()
    else timer ??= setTimeout(flush, FLUSH_MS)
  }
}

/** The current time in ISO 8601, made once per millisecond: the access log asks for it per request. */
let isoMs = 0
let iso = ''
function isoNow(): string {
  const now = Date.now()
  if (now !== isoMs) {
    isoMs = now
    iso = new Date(now).toISOString()
  }
  return iso
}

/**
 * One JSON object per line: `{"time","level","msg",...fields}`. The fields are stringified as they
 * are and joined to the head, rather than copied into a new object first (one line per request);
 * a field named like a head key comes after it, so it wins as it would in a spread.
 */
export function createLogger(level: LogLevel, sink: LogSink = bufferedStdout()): Logger {
  const min = RANK[level]
  const log = (lvl: LogLevel) => {
    const head = `","level":"${lvl}","msg":`
    return (msg: string, fields?: LogFields) => {
      if (RANK[lvl] < min) return
      const rest = fields === undefined ? '}' : JSON.stringify(fields)
      const tail = rest.length > 2 ? `,${rest.slice(1)}` : '}'
      sink(`{"time":"${isoNow()}${head}${JSON.stringify(msg)}${tail}\n`)
    }
  }
  const info = RANK.info >= min
  const request: Logger['request'] = (id, method, path, status, durationMs) => {
    if (!info) return
    const idField = id === undefined ? '' : `,"request_id":${JSON.stringify(id)}`
    const duration = durationMs === undefined ? '' : `,"duration_ms":${durationMs}`
    sink(
      `{"time":"${isoNow()}","level":"info","msg":"request"${idField},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status}${duration}}\n`,
    )
  }
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), request }
}
