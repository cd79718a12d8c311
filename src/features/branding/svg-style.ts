/**
 * The CSS of an uploaded SVG (its `<style>` sheets, `style=""` and presentation attributes), read as
 * CSS Syntax Level 3 reads it rather than searched as written: comments removed and escapes decoded
 * first, so `\75rl(` is judged as the `url(` it is. What reaches out (an external `url()`, an image
 * function, `@import`, `@font-face`, script) refuses the file, as svg.ts refuses a script. Sheets and
 * style attributes are then written out again from an allowlist: the properties a logo draws with,
 * values of plain tokens only, no escape, comment or other at-rule left, so what was judged is what
 * a browser reads. What is not on the list is dropped, as svg.ts drops elements that do not draw.
 */

const isHex = (c: string) => /^[0-9a-fA-F]$/.test(c)

/** A code point of an escape, or U+FFFD where CSS Syntax §4.3.7 says so (zero, surrogate, too large). */
function codePoint(hex: string): string {
  const n = Number.parseInt(hex, 16)
  return n === 0 || (n >= 0xd800 && n <= 0xdfff) || n > 0x10ffff ? '\uFFFD' : String.fromCodePoint(n)
}

/**
 * CSS text with its comments removed (§4.3.2; not inside strings) and every escape decoded
 * (§4.3.7: a backslash and 1–6 hex digits with one optional whitespace after them, or a backslash
 * and any other character; inside a string, a backslash before a newline continues the line),
 * after §3.3's preprocessing of newlines and NUL.
 */
function decodeCss(raw: string): string {
  const css = raw.replace(/\r\n?|\f/g, '\n').replace(/\0/g, '\uFFFD')
  let out = ''
  let quote: string | null = null
  for (let i = 0; i < css.length; ) {
    const c = css[i]!
    if (!quote && c === '/' && css[i + 1] === '*') {
      const end = css.indexOf('*/', i + 2)
      i = end < 0 ? css.length : end + 2
      continue
    }
    if (c === '\\') {
      const next = css[i + 1]
      if (next === undefined) {
        out += '\uFFFD'
        i++
      } else if (next === '\n') {
        i += 2
      } else if (isHex(next)) {
        let j = i + 1
        while (j < css.length && j < i + 7 && isHex(css[j]!)) j++
        out += codePoint(css.slice(i + 1, j))
        i = /^[ \t\n]$/.test(css[j] ?? '') ? j + 1 : j
      } else {
        out += next
        i += 2
      }
      continue
    }
    if (quote && (c === quote || c === '\n')) quote = null
    else if (!quote && (c === '"' || c === "'")) quote = c
    out += c
    i++
  }
  return out
}

/** A reference inside the document (`#id`), the only one an SVG logo keeps. */
export const LOCAL_FRAGMENT = /^#[A-Za-z_][\w.:-]*$/

/** Functions that load an image from wherever their argument says (CSS Images 3 and 4). */
const IMAGE_FUNCTION =
  /(?<![\w-])(-webkit-image-set|image-set|image|-webkit-cross-fade|cross-fade|-moz-element|element)\s*\(/i

/** Why CSS text (decoded) cannot stay: it reaches out or runs something. Null when it may. */
function decodedProblem(css: string): string | null {
  for (const m of css.matchAll(/url\s*\(\s*(['"]?)\s*([^)'"]*)/gi))
    if (!LOCAL_FRAGMENT.test(m[2]!.trim())) return `an external reference (url(${m[2]!.trim().slice(0, 60)}))`
  const image = IMAGE_FUNCTION.exec(css)
  if (image) return `an image function (${image[1]!.toLowerCase()}())`
  if (/@import/i.test(css)) return 'a style sheet import (@import)'
  if (/@font-face/i.test(css)) return 'a font (@font-face)'
  if (/javascript:|vbscript:|expression\s*\(|-moz-binding|behavior\s*:/i.test(css)) return 'script in a value'
  return null
}

/** Why a value, as written or as CSS reads it, cannot stay; null when it may. */
export const cssProblem = (value: string): string | null =>
  decodedProblem(value) ?? decodedProblem(decodeCss(value))

/** What a logo draws with (SVG 2 presentation properties, fonts, transforms). Anything else is dropped. */
const PROPERTIES = new Set(
  (
    'fill fill-opacity fill-rule stroke stroke-width stroke-opacity stroke-linecap stroke-linejoin ' +
    'stroke-miterlimit stroke-dasharray stroke-dashoffset opacity color display visibility overflow ' +
    'transform transform-origin transform-box font-family font-size font-weight font-style font-variant ' +
    'font-stretch letter-spacing word-spacing text-anchor text-decoration dominant-baseline ' +
    'alignment-baseline baseline-shift writing-mode direction stop-color stop-opacity clip-path clip-rule ' +
    'mask mask-type filter flood-color flood-opacity lighting-color color-interpolation ' +
    'color-interpolation-filters shape-rendering text-rendering image-rendering paint-order vector-effect ' +
    'mix-blend-mode isolation marker marker-start marker-mid marker-end'
  ).split(' '),
)

/** Functions a kept value may call: colours, transforms, arithmetic and filter effects. */
const FUNCTIONS = new Set(
  (
    'rgb rgba hsl hsla hwb lab lch oklab oklch translate translatex translatey rotate scale scalex scaley ' +
    'skew skewx skewy matrix calc min max clamp blur brightness contrast drop-shadow grayscale hue-rotate ' +
    'invert saturate sepia'
  ).split(' '),
)

/** One token of a kept value, at the scanning position (sticky). */
const VALUE_TOKEN = new RegExp(
  [
    /(?<space>[ \t\n]+)/,
    /(?<url>url\(\s*(?<q>["']?)#[A-Za-z_][\w.:-]*\k<q>\s*\))/,
    // A font name: letters, digits, spaces, dots, commas and dashes, nothing that ends or escapes it.
    /(?<string>"[\w .,-]*"|'[\w .,-]*')/,
    /(?<hash>#[0-9a-fA-F]{3,8}(?![\w-]))/,
    /(?<number>[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[+-]?\d+)?(?:%|[a-zA-Z]+)?(?![\w.-]))/,
    /(?<fn>-?[A-Za-z_][\w-]*\()/,
    /(?<ident>-?[A-Za-z_][\w-]*(?![\w(-]))/,
    /(?<punct>[,/])/,
    /(?<close>\))/,
  ]
    .map((r) => r.source)
    .join('|'),
  'iy',
)

/** Whether a decoded value is made only of plain tokens and allowed functions, parentheses balanced. */
function plainValue(value: string): boolean {
  let depth = 0
  VALUE_TOKEN.lastIndex = 0
  while (VALUE_TOKEN.lastIndex < value.length) {
    const m = VALUE_TOKEN.exec(value)
    if (!m) return false
    const { fn, close } = m.groups!
    if (fn) {
      if (!FUNCTIONS.has(fn.slice(0, -1).toLowerCase())) return false
      depth++
    } else if (close && --depth < 0) return false
  }
  return depth === 0 && value.trim() !== ''
}

const IMPORTANT = /\s*!\s*important\s*$/i

/** The kept declarations of a decoded declaration list, as `property: value` (`!important` kept). */
function keptDeclarations(list: string): string[] {
  const kept: string[] = []
  for (const declaration of list.split(';')) {
    const colon = declaration.indexOf(':')
    if (colon < 0) continue
    const property = declaration.slice(0, colon).trim().toLowerCase()
    const value = declaration
      .slice(colon + 1)
      .replace(IMPORTANT, '')
      .trim()
    if (!PROPERTIES.has(property) || !plainValue(value)) continue
    kept.push(`${property}: ${value}${IMPORTANT.test(declaration) ? ' !important' : ''}`)
  }
  return kept
}

/** A decoded selector a rewritten sheet may hold: no string, escape, comment, brace or at-sign. */
const SELECTOR = /^[\w \t\n#.,:>+~*=|^$()[\]-]+$/

/** Whether brackets and parentheses close as they open: an open one would swallow the next rules. */
function balanced(selector: string): boolean {
  let depth = 0
  for (const c of selector) {
    if (c === '(' || c === '[') depth++
    else if ((c === ')' || c === ']') && --depth < 0) return false
  }
  return depth === 0
}

/** The index of the `}` that closes the block opened at `open`, or the text's end. */
function blockEnd(css: string, open: number): number {
  let depth = 0
  for (let i = open; i < css.length; i++) {
    if (css[i] === '{') depth++
    else if (css[i] === '}' && --depth === 0) return i
  }
  return css.length
}

type CssResult = { ok: true; css: string } | { ok: false; reason: string }

/** A `style=""` attribute rewritten, or why it refuses the file. Empty when nothing is kept. */
export function sanitizeDeclarations(raw: string): CssResult {
  const why = cssProblem(raw)
  if (why) return { ok: false, reason: why }
  return { ok: true, css: keptDeclarations(decodeCss(raw)).join('; ') }
}

/**
 * A `<style>` sheet rewritten as its style rules, one a line (`selector { property: value; … }`),
 * or why it refuses the file. At-rules are dropped with their block (`@import` and `@font-face`
 * refuse the file before), as are rules whose selector or declarations are not plain.
 */
export function sanitizeStyleSheet(raw: string): CssResult {
  const why = cssProblem(raw)
  if (why) return { ok: false, reason: why }
  const css = decodeCss(raw)
  const rules: string[] = []
  for (let i = 0; i < css.length; ) {
    const open = css.indexOf('{', i)
    const semicolon = css.indexOf(';', i)
    const atRule = css.slice(i).trimStart().startsWith('@')
    if (atRule && semicolon >= 0 && (open < 0 || semicolon < open)) {
      i = semicolon + 1
      continue
    }
    if (open < 0) break
    const close = blockEnd(css, open)
    const selector = css.slice(i, open).trim()
    const declarations = keptDeclarations(css.slice(open + 1, close))
    if (!atRule && SELECTOR.test(selector) && balanced(selector) && declarations.length)
      rules.push(`${selector} { ${declarations.join('; ')} }`)
    i = close + 1
  }
  return { ok: true, css: rules.join('\n') }
}
