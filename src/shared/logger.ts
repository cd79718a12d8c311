import type { LogLevel } from '../config'

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export type LogFields = Record<string, unknown>

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

export type LogSink = (line: string) => void

/**
 * Lines are batched and written once per macrotask: one write per burst instead of one
 * per request keeps the access log off the hot path.
 */
function bufferedStdout(): LogSink {
  let pending: string[] = []
  const flush = () => {
    const chunk = pending.join('')
    pending = []
    process.stdout.write(chunk)
  }
  process.on('exit', () => pending.length && flush())
  return (line) => {
    if (pending.push(line) === 1) setImmediate(flush)
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
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}
