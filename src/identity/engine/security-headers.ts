import { baseSecurityHeaders, cspOf } from '../../shared/security-headers'
import type { HostedBrand } from '../../shared/views/brand'
import { LAYOUT_STYLE_HASH } from '../../shared/views/hosted-layout'
import { AUTO_LOGOUT_SCRIPT_HASH } from '../pages/logout'
import { WEBAUTHN_SCRIPT_HASH } from '../pages/mfa-views'

/**
 * The policy of every identity-plane response. The hosted pages are self-contained: one inline
 * `<style>` and two inline scripts (the logout page's, the passkey ceremony's), allowed by hash, and
 * htmx served by the instance itself for the pages that poll it (`'self'`, and `connect-src` for
 * the requests it makes). No `form-action`:
 * Chromium applies it to the redirects after a form post, and a sign-in form ends at whatever
 * redirect URI the app registered. oidc-provider adds the hash of its own auto-submitting form
 * (form_post responses, the device code link) to `script-src` when it finds this policy already
 * set on its response (lib/helpers/script_src_sha.js), so the bridge sets it before dispatching.
 * A branded instance's policy (`Instance.csp`) adds the hash of its colours' style element.
 */
export const identityCsp = (brand: Pick<HostedBrand, 'styleHash'> | null = null) =>
  cspOf({
    'default-src': ["'none'"],
    // A branded instance's colours are one more style element, allowed by its own hash.
    'style-src': brand?.styleHash ? [LAYOUT_STYLE_HASH, brand.styleHash] : [LAYOUT_STYLE_HASH],
    // Images of the page's own origin only: the platform's icon the layout links (FAVICON_PATH) and a
    // branded instance's logo, both served there however instances are addressed (by path or host).
    'img-src': ["'self'"],
    'script-src': ["'self'", AUTO_LOGOUT_SCRIPT_HASH, WEBAUTHN_SCRIPT_HASH],
    'connect-src': ["'self'"],
    'frame-ancestors': ["'none'"],
    'base-uri': ["'none'"],
  })

export const IDENTITY_CSP = identityCsp()

/**
 * The policy of the plane's answers that are no page (discovery, JWKS, token, introspection,
 * userinfo…: JSON, never rendered): nothing may load in them or frame them, as an API answers
 * (OWASP REST Security). A fifth of the pages' policy in bytes, on the plane's most frequent
 * answers, whose every client parses it.
 */
export const DOCUMENT_CSP = cspOf({
  'default-src': ["'none'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
})

/** What the policy below reads and writes: a fetch `Headers`, or the header map of an injected response. */
export interface HeaderBag {
  has(name: string): boolean
  get(name: string): unknown
  set(name: string, value: string): unknown
}

/**
 * Adds the identity plane's headers to a response leaving the front door: anti-framing, nosniff,
 * no referrer (page URLs carry interaction ids), HSTS on https, and the policy above unless the
 * response already has one (oidc-provider's, extended with a script hash). Applied to the
 * provider's headers before its `Response` is built (`inject`'s finish), or to a `Headers`.
 */
export function identitySecurityHeaders(https: boolean): (headers: HeaderBag) => void {
  const always = Object.entries(baseSecurityHeaders(https))
  return (headers) => {
    for (const [name, value] of always) headers.set(name, value)
    if (!headers.has('referrer-policy')) headers.set('referrer-policy', 'no-referrer')
    if (!headers.has('content-security-policy')) headers.set('content-security-policy', IDENTITY_CSP)
    // Hosted pages carry CSRF tokens, user codes and fresh session cookies: never kept by a cache.
    if (!headers.has('cache-control') && String(headers.get('content-type') ?? '').startsWith('text/html'))
      headers.set('cache-control', 'no-store')
  }
}
