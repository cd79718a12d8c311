// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { safeNext } from './service'

const BASE = 'http://127.0.0.1:8080'

describe('safeNext', () => {
  it('keeps a relative path with query and fragment', () => {
    expect(safeNext('/app/workspaces/new', BASE)).toBe('/app/workspaces/new')
    expect(safeNext('/app/x?tab=apps#top', BASE)).toBe('/app/x?tab=apps#top')
    expect(safeNext('/app/x?next=%2F%2Fevil.example', BASE)).toBe('/app/x?next=%2F%2Fevil.example')
  })

  it('answers the normalised path, resolved as a browser would', () => {
    expect(safeNext('/app/a/../b/./c', BASE)).toBe('/app/b/c')
    expect(safeNext('/app/%2e%2e/app/', BASE)).toBe('/app/')
  })

  it('resolves against a BASE_URL served under https', () => {
    expect(safeNext('/app/', 'https://auth.example.com')).toBe('/app/')
    expect(safeNext('/.//evil.example', 'https://auth.example.com')).toBeNull()
  })

  for (const unsafe of [
    // Dot segments that collapse into a protocol-relative `//host` once normalised.
    '/.//evil.example',
    '/..//evil.example',
    '/app/..//evil.example',
    '/app/../../..//evil.example',
    '/app/%2e%2e/%2e%2e//evil.example',
    '/app/%2E%2E/%2e%2E//evil.example',
    '/app/.%2e/.%2e//evil.example',
    // Protocol-relative, raw or with encoded slashes and backslashes.
    '//evil.example',
    '///evil.example',
    '/%2f%2fevil.example',
    '/%2F/evil.example',
    '/%5cevil.example',
    '/%5C%5Cevil.example',
    '/app/..%2f..%2f/evil.example',
    // Backslashes, which a browser's URL parser reads as slashes.
    '/\\evil.example',
    '\\/evil.example',
    '\\\\evil.example',
    '/app\\..\\..\\evil',
    // Tabs, newlines and CR are removed by the URL parser (`/\t/` becomes `//`), or split headers.
    '/\t/evil.example',
    '/\n/evil.example',
    '/\r/evil.example',
    '/app\r\nLocation: https://evil.example',
    '/%09/evil.example',
    '/app%0d%0aSet-Cookie:x=1',
    // Schemes in any case, and other absolute forms.
    'javascript:alert(1)',
    'JAVASCRIPT:alert(1)',
    'JaVaScRiPt:alert(1)',
    ' javascript:alert(1)',
    'http://evil.example',
    'HTTP://evil.example',
    'https:evil.example',
    'https://evil.example',
    'data:text/html,<script>alert(1)</script>',
    'evil.example/app',
    // Unicode look-alikes, invisible and bidi characters: never needed in a percent-encoded path.
    '/\uFF0F/evil.example',
    '/\uFF3Cevil.example',
    '/\u2215\u2215evil.example',
    '\u200B//evil.example',
    '/app/\u202Egnp.exe',
    '/\u3002/evil.example',
    '/%EF%BC%8F/evil.example',
    // Malformed escapes, over-long values and nothing at all.
    '/app/%zz',
    `/${'a'.repeat(2048)}`,
    '',
    undefined,
  ]) {
    it(`drops ${JSON.stringify(unsafe)}`, () => {
      expect(safeNext(unsafe, BASE)).toBeNull()
    })
  }
})
