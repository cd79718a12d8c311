import type { Config } from '../../config'

/** Where a local probe reaches a server bound to `host`: a wildcard bind answers on loopback. */
export function healthzUrl({ host, port }: Pick<Config, 'host' | 'port'>): string {
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
    await res.arrayBuffer()
    return res.status === 200 ? null : `${url} answered ${res.status}`
  } catch (e) {
    const err = e as Error & { code?: string }
    if (err.name === 'TimeoutError') return `${url} did not answer within ${timeoutMs} ms`
    return `${url} did not answer (${err.code ?? err.message})`
  }
}
