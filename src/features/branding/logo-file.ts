import { createHash } from 'node:crypto'
import { appError } from '../../shared/errors'
import { BrandingErrors } from './errors'
import { sanitizeSvg } from './svg'

const LOGO_MAX_BYTES = 1024 * 1024

type LogoType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/svg+xml'

const startsWith = (bytes: Uint8Array, signature: number[], at = 0) =>
  signature.every((b, i) => bytes[at + i] === b)

/** An SVG document's start: an optional XML declaration, comments and DOCTYPE, then the svg element. */
const SVG_START = /^(?:\s|<\?xml[^>]*\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>[]*>)*<svg[\s>/]/i

/**
 * The type a logo is, from its bytes alone (never its name or declared type): the signatures of
 * PNG, JPEG (SOI then a marker) and WebP (a RIFF of WEBP), or UTF-8 text that starts as an SVG
 * document. Null for anything else.
 */
function sniffLogo(bytes: Uint8Array): { type: LogoType; text?: string } | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { type: 'image/png' }
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { type: 'image/jpeg' }
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8))
    return { type: 'image/webp' }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    return null
  }
  return SVG_START.test(text) ? { type: 'image/svg+xml', text } : null
}

interface CheckedLogo {
  contentType: LogoType
  /** As stored and served: the upload's bytes, or an SVG as sanitised. */
  bytes: Uint8Array
  version: string
}

const refused = (code: keyof typeof BrandingErrors, message?: string) =>
  appError(BrandingErrors[code], 422, { loc: ['body', 'logo'], message })

/** An uploaded logo as it will be stored, or a 422 at `logo` saying why not. */
export function checkLogo(upload: Uint8Array): CheckedLogo {
  if (upload.byteLength === 0) throw refused('LOGO_EMPTY')
  if (upload.byteLength > LOGO_MAX_BYTES) throw refused('LOGO_TOO_LARGE')
  const sniffed = sniffLogo(upload)
  if (!sniffed) throw refused('LOGO_TYPE')
  let bytes = upload
  if (sniffed.type === 'image/svg+xml') {
    const clean = sanitizeSvg(sniffed.text!)
    if (!clean.ok) throw refused('SVG_UNSAFE', `This SVG cannot be used: ${clean.reason}.`)
    bytes = new TextEncoder().encode(clean.svg)
  }
  const version = createHash('sha256').update(bytes).digest('hex').slice(0, 32)
  return { contentType: sniffed.type, bytes, version }
}
