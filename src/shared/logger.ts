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

interface LogSink {
  (line: string): void
  /**
   * Takes an access-log record to write later, formatted then (the stdout batch has it): what a
   * request pays is keeping six values. Without it, a sink is handed each line as it is made.
   */
  record?(r: AccessRecord): void
}

/** An access-log line before it is written: when, and what `Logger.request` was given. */
interface AccessRecord {
  at: number
  id: string | undefined
  method: string
  path: string
  status: number
  durationMs: number | undefined
}

/** What an access line holds besides its id and path (time, names, method, status, duration). */
const RECORD_BYTES = 150

/** How long a line may wait for others before it is written, and how much may wait. */
const FLUSH_MS = 10
const FLUSH_BYTES = 64 * 1024

/**
 * Lines are batched and written every few milliseconds (or sooner, once a batch is large): under
 * load one write carries hundreds of access-log lines instead of the few a macrotask sees, which
 * kept a write per handful of requests on the hot path. A line is never held longer than
 * FLUSH_MS; what is pending is written on exit (standard output's batch) or by `flush`.
 */
export function batchedSink(
  write: (chunk: string) => void = (chunk) => process.stdout.write(chunk),
): LogSink & { flush(): void } {
  let pending: (string | AccessRecord)[] = []
  let bytes = 0
  let timer: ReturnType<typeof setTimeout> | null = null
  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = null
    let chunk = ''
    for (const item of pending) chunk += typeof item === 'string' ? item : accessLine(item)
    pending = []
    bytes = 0
    write(chunk)
  }
  const add = (item: string | AccessRecord, size: number) => {
    pending.push(item)
    bytes += size
    if (bytes >= FLUSH_BYTES) flush()
    else timer ??= setTimeout(flush, FLUSH_MS)
  }
  // Access records are formatted when the batch is written, hundreds in one loop, after their
  // answers went out: in the request, a line cost ~1.7 us of a cached answer's ~16 (its
  // caches cold), and the same work in a loop a fraction of that.
  return Object.assign((line: string) => add(line, line.length), {
    record: (r: AccessRecord) => add(r, RECORD_BYTES + r.path.length + (r.id?.length ?? 0)),
    flush: () => pending.length && flush(),
  })
}

/** Standard output, batched; what is pending is written when the process exits. */
function stdoutSink(): LogSink {
  const sink = batchedSink()
  process.on('exit', sink.flush)
  return sink
}

/** A time in ISO 8601, made once per millisecond: the access log asks for it per request. */
let isoMs = 0
let iso = ''
function isoAt(now: number): string {
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
export function createLogger(level: LogLevel, sink: LogSink = stdoutSink()): Logger {
  const min = RANK[level]
  const log = (lvl: LogLevel) => {
    const head = `","level":"${lvl}","msg":`
    return (msg: string, fields?: LogFields) => {
      if (RANK[lvl] < min) return
      const rest = fields === undefined ? '}' : JSON.stringify(fields)
      const tail = rest.length > 2 ? `,${rest.slice(1)}` : '}'
      sink(`{"time":"${isoAt(Date.now())}${head}${JSON.stringify(msg)}${tail}\n`)
    }
  }
  const info = RANK.info >= min
  const record = sink.record
  const request: Logger['request'] = (id, method, path, status, durationMs) => {
    if (!info) return
    const r = { at: Date.now(), id, method, path, status, durationMs }
    if (record) record(r)
    else sink(accessLine(r))
  }
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), request }
}

/**
 * Methods and paths as JSON strings, remembered: the same few come again and again (a cached
 * document's path is even the same string each time, its hash kept), and quoting them was a third
 * of a line's making. At most QUOTED of at most QUOTED_LENGTH characters are kept (~0.25 MiB); the
 * memo starts over when full.
 */
const quoted = new Map<string, string>()
const QUOTED = 512
const QUOTED_LENGTH = 256
function quote(s: string): string {
  if (s.length > QUOTED_LENGTH) return JSON.stringify(s)
  let q = quoted.get(s)
  if (q === undefined) {
    if (quoted.size >= QUOTED) quoted.clear()
    q = JSON.stringify(s)
    quoted.set(s, q)
  }
  return q
}

/** The access-log line of a record: what `info('request', fields)` writes, from one template. */
function accessLine({ at, id, method, path, status, durationMs }: AccessRecord): string {
  const idField = id === undefined ? '' : `,"request_id":${JSON.stringify(id)}`
  const duration = durationMs === undefined ? '' : `,"duration_ms":${durationMs}`
  return `{"time":"${isoAt(at)}","level":"info","msg":"request"${idField},"method":${quote(method)},"path":${quote(path)},"status":${status}${duration}}\n`
}
