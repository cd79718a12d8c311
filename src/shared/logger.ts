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

/** One JSON object per line: `{"time","level","msg",...fields}`. */
export function createLogger(level: LogLevel, sink: LogSink = bufferedStdout()): Logger {
  const min = RANK[level]
  const log = (lvl: LogLevel) => (msg: string, fields?: LogFields) => {
    if (RANK[lvl] < min) return
    sink(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`)
  }
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}
