import { createHash } from 'node:crypto'

/** A hash source allowing one inline `<script>` or `<style>` element by its exact text (CSP3 §2.3.1). */
export const cspHash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

/** A Content-Security-Policy header value from its directives. */
export const cspOf = (directives: Record<string, string[]>) =>
  Object.entries(directives)
    .map(([name, sources]) => [name, ...sources].join(' '))
    .join('; ')

/** RFC 6797 §6.1: a year, subdomains included; sent only when BASE_URL is https (§7.2: never over http). */
export const HSTS = 'max-age=31536000; includeSubDomains'

/**
 * What every response of either plane carries: no MIME sniffing (a JSON or text body is never
 * run as a script or page), no framing by anyone (clickjacking; `frame-ancestors` says the same
 * to browsers that read CSP), and HSTS on an https deployment.
 */
export function baseSecurityHeaders(https: boolean): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    ...(https ? { 'strict-transport-security': HSTS } : {}),
  }
}
