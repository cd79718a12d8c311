import { Elysia } from 'elysia'
import { baseSecurityHeaders, cspOf } from '../security-headers'

interface ControlPlaneHeaderOptions {
  https: boolean
  /** Origins a dashboard form may end up at after redirects (the platform instance's, for login and logout). */
  formActions: string[]
  /** Hashes of inline `<style>` elements a control-plane page may carry (see `cspHash`). */
  styleHashes: string[]
  /** Hosts images come from besides this origin (instances' logos on a host-based issuer). */
  imageSources?: string[]
  /** Path prefixes whose pages bring their own inline assets and so get no policy from here. */
  cspExempt: string[]
}

const pathOf = (url: string) => {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const end = url.indexOf('?', start)
  return start < 0 ? '/' : url.slice(start, end < 0 ? undefined : end)
}

/**
 * The control plane's response headers, in one place. Dashboard pages run no inline script (htmx
 * and app.js come from /public), so `script-src 'self'` holds; `form-action` also names the
 * platform instance because Chromium applies it to the redirects that follow a form post (a
 * sign-out, or a form sent with an expired session, ends on the sign-in pages).
 * `Cache-Control: no-store` is the default, since answers carry sessions' CSRF tokens, client
 * secrets and tokens; a route that may be cached says so itself (its own header wins).
 */
export function securityHeadersPlugin(options: ControlPlaneHeaderOptions) {
  const common = {
    ...baseSecurityHeaders(options.https),
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
  }
  const withPolicy = {
    ...common,
    'content-security-policy': cspOf({
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'", ...options.styleHashes],
      'img-src': [...new Set(["'self'", ...(options.imageSources ?? [])])],
      'connect-src': ["'self'"],
      'form-action': ["'self'", ...options.formActions],
      'frame-ancestors': ["'none'"],
      'base-uri': ["'none'"],
    }),
  }
  const exempt = (path: string) =>
    options.cspExempt.some((p) => path === p || path.startsWith(`${p}/`) || path.startsWith(`${p}.`))
  return new Elysia({ name: 'security-headers' }).onRequest(({ request, set }) => {
    Object.assign(set.headers, exempt(pathOf(request.url)) ? common : withPolicy)
  })
}
