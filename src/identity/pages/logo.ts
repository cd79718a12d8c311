import { type IdentityError, writeError } from '../errors'
import type { PageContext, PageRequest } from './http'

/**
 * What a logo may do once loaded: nothing. An SVG opened on its own is a document, so it gets a
 * policy that runs no script, loads nothing and is sandboxed (its inline styles alone may apply);
 * a raster image needs even less. The bytes were sniffed and an SVG sanitised at upload: this is
 * the second wall.
 */
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
const RASTER_CSP = "default-src 'none'; sandbox"

const NO_LOGO: IdentityError = { status: 404, title: 'Not found', message: 'This workspace has no logo.' }

/** RFC 9110 §13.1.2: whether If-None-Match names the current representation (weak comparison). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag)
}

/**
 * `{auth_url}/branding/logo`: the workspace's logo with the type sniffed at upload, `nosniff` (the
 * plane's), an ETag (its version) and a 304 for a browser that has it. The versioned URL the pages
 * link (`?v=`) never changes meaning, so it is cached for good; any other asks again each time.
 */
export async function serveLogo(c: PageContext, p: PageRequest) {
  const brand = p.instance.brand
  // The instance is rebuilt on every node when the logo changes: its version is the current one,
  // and a browser that holds it is answered without reading the bytes.
  const known = brand?.logoUrl ? new URL(brand.logoUrl).searchParams.get('v') : null
  if (!known) return writeError(p.res, NO_LOGO, p.req.headers.accept)
  const headersOf = (version: string, type: string | null) => ({
    etag: `"${version}"`,
    'cache-control': p.query.get('v') === version ? 'public, max-age=31536000, immutable' : 'no-cache',
    'content-security-policy':
      type === 'image/png' || type === 'image/jpeg' || type === 'image/webp' ? RASTER_CSP : SVG_CSP,
    'x-content-type-options': 'nosniff',
  })
  if (matches(p.req.headers['if-none-match'], `"${known}"`)) {
    p.res.writeHead(304, headersOf(known, null))
    p.res.end()
    return
  }
  const logo = await c.extensions.branding?.logo(p.instance.id)
  if (!logo) return writeError(p.res, NO_LOGO, p.req.headers.accept)
  p.res.writeHead(200, {
    ...headersOf(logo.version, logo.contentType),
    'content-type': logo.contentType,
    'content-length': String(logo.bytes.byteLength),
  })
  p.res.end(logo.bytes)
}
