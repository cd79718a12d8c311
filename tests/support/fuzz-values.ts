// Hostile values for the fuzzer (fuzz.ts): a seeded PRNG, strings that have broken parsers,
// templates and terminals elsewhere, and values shaped from a JSON schema, then bent.

export type Rand = () => number

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
export function prng(seed: number): Rand {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T
export const chance = (r: Rand, p: number) => r() < p
export const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1))

// None of these contains what the stack-trace check looks for (".ts:", "node_modules", "    at "),
// so a page that echoes one back is never mistaken for a leak.
const STRINGS = [
  '',
  ' ',
  'a',
  'null',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  "' OR '1'='1",
  '"; DROP TABLE workspaces; --',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '{{7*7}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as is
  '${7*7}',
  '%s%n%x%d',
  '../../../../etc/passwd',
  '..%2f..%2f',
  '%00',
  '%',
  '%ZZ',
  '%E0%A4%A',
  '\u0000',
  '\u202eexe.txt',
  '\u2066x\u2069',
  '\ud800',
  '\udfff\ud800',
  '😀👩‍💻',
  'Ω≈ç√∫',
  'ﷺ',
  'ｆｕｌｌｗｉｄｔｈ',
  'e\u0301\u0301\u0301',
  '\r\n\r\nHTTP/1.1 200 OK',
  'a\tb\vc\fd',
  '\\',
  '//evil.example',
  '/\\evil.example',
  'javascript:alert(1)',
  'https://evil.example/cb',
  'data:text/html,<b>x</b>',
  'com.example.app:/cb',
  'http://localhost:3000/cb',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '9007199254740993',
  'platform',
  'PLATFORM',
]

/** A string of random code points: controls, lone surrogates, private use, astral, combining marks. */
function randomUnicode(r: Rand, length: number): string {
  const ranges: [number, number][] = [
    [0x00, 0x1f],
    [0x20, 0x7e],
    [0x7f, 0x9f],
    [0xa0, 0x2ff],
    [0x300, 0x36f],
    [0x590, 0x6ff],
    [0x200b, 0x206f],
    [0xd800, 0xdfff],
    [0xe000, 0xf8ff],
    [0xfff0, 0xffff],
    [0x1f300, 0x1faff],
    [0x10fff0, 0x10ffff],
  ]
  let out = ''
  for (let i = 0; i < length; i++) {
    const [lo, hi] = pick(r, ranges)
    out += String.fromCodePoint(int(r, lo, hi))
  }
  return out
}

/** A hostile string: a known troublemaker, random Unicode, or (rarely) a huge one. */
export function hostileString(r: Rand, { huge = 0.02 } = {}): string {
  const roll = r()
  if (roll < huge) return pick(r, ['x', 'é', '😀', '\u202e', '%']).repeat(int(r, 64 * 1024, 700 * 1024))
  if (roll < 0.55) return pick(r, STRINGS)
  if (roll < 0.85) return randomUnicode(r, int(r, 1, 40))
  return pick(r, STRINGS) + randomUnicode(r, int(r, 1, 8)) + pick(r, STRINGS)
}

/** A value of any JSON type, nested up to `depth`. */
export function anyValue(r: Rand, depth = 3): unknown {
  const roll = int(r, 0, depth > 0 ? 9 : 5)
  switch (roll) {
    case 0:
      return null
    case 1:
      return chance(r, 0.5)
    case 2:
      return pick(r, [0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, -0])
    case 3:
    case 4:
    case 5:
      return hostileString(r)
    case 6:
    case 7:
      return Array.from({ length: int(r, 0, 4) }, () => anyValue(r, depth - 1))
    default:
      return Object.fromEntries(
        Array.from({ length: int(r, 0, 4) }, () => [hostileString(r, { huge: 0 }), anyValue(r, depth - 1)]),
      )
  }
}

/** `[[[…]]]` or `{"a":{"a":…}}` nested `depth` times, as JSON text. */
export function deeplyNested(r: Rand, depth: number): string {
  return chance(r, 0.5)
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
}

export interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  anyOf?: JsonSchema[]
  const?: unknown
  enum?: unknown[]
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
}

/** A value that fits `schema` (or nearly: strings are hostile), sometimes bent out of shape. */
export function fromSchema(r: Rand, schema: JsonSchema | undefined, depth = 0): unknown {
  if (!schema || depth > 6 || chance(r, 0.12)) return anyValue(r)
  if (schema.anyOf?.length) return fromSchema(r, pick(r, schema.anyOf), depth + 1)
  if (schema.const !== undefined) return schema.const
  if (schema.enum?.length) return pick(r, schema.enum)
  const type = Array.isArray(schema.type) ? pick(r, schema.type) : schema.type
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [key, sub] of Object.entries(schema.properties ?? {})) {
        const required = schema.required?.includes(key)
        if (chance(r, required ? 0.92 : 0.6)) out[key] = fromSchema(r, sub, depth + 1)
      }
      if (chance(r, 0.15)) out[hostileString(r, { huge: 0 })] = anyValue(r)
      return out
    }
    case 'array': {
      const many = chance(r, 0.08)
      const length = many ? int(r, 90, 160) : int(r, 0, 4)
      return Array.from({ length }, () => fromSchema(r, schema.items, depth + 1))
    }
    case 'string':
      return chance(r, 0.35) ? `ok ${int(r, 1, 1e6)}` : hostileString(r)
    case 'integer':
    case 'number':
      return pick(r, [0, 1, -1, 50, 201, 1e9, 1.5, Number.NaN])
    case 'boolean':
      return chance(r, 0.5)
    default:
      return anyValue(r)
  }
}
