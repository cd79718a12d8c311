// legs: once — docs only
// The front pages a newcomer reads (issue 59): README.md stays short, every relative link of it and of
// docs/*.md reaches a file and heading that exist, and docs/configuration.md names exactly what the
// server reads from its environment.
import { describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { Glob } from 'bun'

const root = resolve(import.meta.dir, '..')
const read = (path: string) => readFileSync(join(root, path), 'utf8')
const PAGES = [
  'README.md',
  'ARCHITECTURE.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** The text a reader sees as prose: fenced blocks and code spans hold no links. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '')

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '')
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n ? `${slug}-${n}` : slug)
  }
  for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!)
  return anchors
}

/** Every relative link of a page that does not reach its file, or its heading there. */
function brokenLinks(page: string): string[] {
  const broken: string[] = []
  for (const [, target] of prose(read(page)).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue
    const [path, anchor] = target!.split('#') as [string, string | undefined]
    const file = path ? relative(root, resolve(join(root, dirname(page)), path)) : page
    if (!existsSync(join(root, file))) {
      broken.push(`${page}: ${target} (no file ${file})`)
      continue
    }
    if (anchor !== undefined && !(file.endsWith('.md') && anchorsOf(read(file)).has(anchor)))
      broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`)
  }
  return broken
}

/**
 * The variables src/config.ts reads: `env.NAME`, a helper's `(env, 'NAME'`, and the sign-in providers'
 * `${prefix}_CLIENT_ID`/`_SECRET` for each prefix it names.
 */
function configVariables(): string[] {
  const source = read('src/config.ts')
  const names = new Set<string>()
  for (const [, name] of source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) names.add(name!)
  for (const [, name] of source.matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)) names.add(name!)
  const prefixes = [...source.matchAll(/(?:prefix: |pair\()'([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]!)
  const suffixes = [...source.matchAll(/env\[`\$\{prefix\}([A-Z0-9_]+)`\]/g)].map((m) => m[1]!)
  for (const prefix of prefixes) for (const suffix of suffixes) names.add(`${prefix}${suffix}`)
  return [...names].sort()
}

/** The first column of docs/configuration.md's tables: every variable it documents. */
function documentedVariables(): string[] {
  const names = new Set<string>()
  for (const [, cell] of read('docs/configuration.md').matchAll(/^\| ([^|]+) \|/gm))
    for (const [, name] of cell!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(name!)
  return [...names].sort()
}

/** Everything that may read a variable: the server, the CLI, scripts, tests and their configs. */
function sourceText(): string {
  const files = [
    ...new Glob('{src,scripts,tests}/**/*.{ts,tsx,sh}').scanSync(root),
    ...new Glob('*.config.ts').scanSync(root),
  ].filter((f) => !f.endsWith('docs-links.test.ts'))
  return files.map((f) => read(f)).join('\n')
}

describe('the front pages', () => {
  it('keep README.md within 250 lines', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(250)
  })

  it('link only to files and headings that exist', () => {
    expect(PAGES).toContain('docs/configuration.md')
    expect(PAGES.flatMap(brokenLinks)).toEqual([])
  })

  it('document every variable src/config.ts reads in docs/configuration.md', () => {
    const read = configVariables()
    // The extraction itself works: a plain read, a helper's, and a provider pair.
    expect(read).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'PORT', 'GITHUB_CLIENT_SECRET', 'PLATFORM_OIDC_CLIENT_ID']),
    )
    expect(read.filter((name) => !documentedVariables().includes(name))).toEqual([])
  })

  it('document no variable that nothing reads', () => {
    const text = sourceText()
    expect(documentedVariables().filter((name) => !text.includes(name))).toEqual([])
  })
})
