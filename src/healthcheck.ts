import type { Config } from './config'

/** Where a local probe reaches a server bound to `host`: a wildcard bind answers on loopback. */
function healthzUrl({ host, port }: Pick<Config, 'host' | 'port'>): string {
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  return `http://${target.includes(':') ? `[${target}]` : target}:${port}/healthz`
}

/**
 * `gatehouse healthcheck` (the Dockerfile's HEALTHCHECK): null when /healthz answers 200 within
 * `timeoutMs`, else the reason in one line. Reads nothing from disk and writes nothing.
 */
export async function checkHealth(
  listen: Pick<Config, 'host' | 'port'>,
  timeoutMs = 3000,
): Promise<string | null> {
  if (listen.port === 0) return 'PORT is 0 (a free port picked at start): set the port the server listens on'
  const url = healthzUrl(listen)
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' })
    const body = await res.text()
    if (res.status === 200) return null
    return `${url} answered ${res.status}${databaseDown(body) ? ' (the database is unavailable)' : ''}`
  } catch (e) {
    const err = e as Error & { code?: string }
    if (err.name === 'TimeoutError') return `${url} did not answer within ${timeoutMs} ms`
    return `${url} did not answer (${err.code ?? err.message})`
  }
}

/** Whether a /healthz body says the database did not answer. */
function databaseDown(body: string): boolean {
  try {
    return (JSON.parse(body) as { database?: unknown }).database === 'unavailable'
  } catch {
    return false
  }
}
