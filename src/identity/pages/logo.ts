import { Elysia } from 'elysia'
import { appError } from '../../shared/errors'
import { LOGO_PATH } from '../branding'
import { hostedPage } from '../engine/hosted'
import { IDENTITY_ERRORS } from '../error-codes'
import type { PageContext } from './http'

/**
 * What a logo may do once loaded: nothing. An SVG opened on its own is a document, so it gets a
 * policy that runs no script, loads nothing and is sandboxed (its inline styles alone may apply);
 * a raster image needs even less. The bytes were sniffed and an SVG sanitised at upload: this is
 * the second wall.
 */
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
const RASTER_CSP = "default-src 'none'; sandbox"

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
export const logoAsset = ({ extensions }: PageContext) =>
  new Elysia({ name: 'logo-asset' })
    .use(hostedPage('hosted-page'))
    .get(LOGO_PATH, async ({ hosted, request, query }) => {
      const brand = hosted.instance.brand
      // The instance is rebuilt on every node when the logo changes: its version is the current one,
      // and a browser that holds it is answered without reading the bytes.
      const known = brand?.logoUrl ? new URL(brand.logoUrl).searchParams.get('v') : null
      if (!known) throw appError(IDENTITY_ERRORS.NO_LOGO, 404)
      const headersOf = (version: string, type: string | null) => ({
        etag: `"${version}"`,
        'cache-control': query.v === version ? 'public, max-age=31536000, immutable' : 'no-cache',
        'content-security-policy':
          type === 'image/png' || type === 'image/jpeg' || type === 'image/webp' ? RASTER_CSP : SVG_CSP,
        'x-content-type-options': 'nosniff',
      })
      if (matches(request.headers.get('if-none-match') ?? undefined, `"${known}"`))
        return new Response(null, { status: 304, headers: headersOf(known, null) })
      const logo = await extensions.branding?.logo(hosted.instance.id)
      if (!logo) throw appError(IDENTITY_ERRORS.NO_LOGO, 404)
      return new Response(logo.bytes as Uint8Array<ArrayBuffer>, {
        headers: {
          ...headersOf(logo.version, logo.contentType),
          'content-type': logo.contentType,
          'content-length': String(logo.bytes.byteLength),
        },
      })
    })
