import { appError } from '../../shared/errors'
import { AppsErrors } from './errors'
import type { AppType } from './schema'

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:'])

/**
 * Why a redirect URI is refused, or null when it is fine:
 * - absolute, no fragment (RFC 6749 §3.1.2);
 * - https, or http on localhost / 127.0.0.1 / [::1] when `dev_mode` is on;
 * - native apps also: loopback http on any port (RFC 8252 §7.3) and private-use schemes in
 *   reverse-domain form such as `com.example.app:/callback` (RFC 8252 §7.1).
 */
function redirectUriProblem(raw: string, appType: AppType, devMode: boolean): string | null {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'Enter an absolute URI, such as https://app.example.com/callback'
  }
  if (url.hash || raw.includes('#')) return 'A redirect URI must not contain a fragment (#…)'
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `The ${url.protocol} scheme is not allowed`
  if (url.protocol === 'https:') return null
  if (url.protocol === 'http:') {
    if (LOOPBACK.has(url.hostname) && (devMode || appType === 'native')) return null
    return 'HTTPS is required (turn on dev_mode to allow http://localhost)'
  }
  if (appType === 'native' && /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/i.test(url.protocol)) return null
  return appType === 'native'
    ? `The ${url.protocol} scheme is not allowed; use https or a reverse-domain scheme such as com.example.app:`
    : `The ${url.protocol} scheme is not allowed; use https`
}

/** Throws a 422 pointing at the first offending URI (`loc: ["body", field, index]`). */
export function checkRedirectUris(field: string, uris: string[], appType: AppType, devMode: boolean): void {
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri, appType, devMode)
    if (problem)
      throw appError(AppsErrors.REDIRECT_URI_INVALID, 422, { loc: ['body', field, i], message: problem })
  })
}
