// The walls of the architecture (ARCHITECTURE.md), checked on every `npm run check`: which folder may
// import which. Type imports count as much as value ones (`import type`, `import { type X }`,
// `import('…')` in a type): a type ties two folders together as firmly, only the transpiler forgets
// it. An import across a wall fails the check with the file, the import and the rule it breaks.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

const root = resolve(import.meta.dir, '..')
const src = join(root, 'src')

interface Rule {
  name: string
  /** Whether the rule applies to an import from `from` (a path below src/) of `to` (ditto). */
  breaks(from: string, to: string): boolean
}

/** The layers every other part may use, and which use none of them. */
const LOW_LEVEL = ['shared/', 'db/', 'queue/', 'events/', 'audit/', 'limits/']

/** The guard's HTTP parts: Elysia's macro and the route path check. */
const ACCESS_HTTP = /^access\/(guard|route-path)\.ts$/
/** Access's model and scope rules: plain types and functions that services and audit/ name. */
const ACCESS_PLAIN = /^access\/(model|scopes)\.ts$/
/** What access shows features: principals and actors, scope rules, the guard. */
const ACCESS_FACE = /^access\/(model|scopes|guard)\.ts$/

const featureOf = (path: string) => /^features\/([^/]+)\//.exec(path)?.[1] ?? null
/** What a feature shows others: its service (and the types and rules of its model). */
const PUBLIC_FACE = /^features\/[^/]+\/(service|model)\.tsx?$/

export const RULES: Rule[] = [
  {
    name: 'a feature reaches the identity plane only through identity/index.ts',
    breaks: (from, to) =>
      from.startsWith('features/') && to.startsWith('identity/') && to !== 'identity/index.ts',
  },
  {
    name: 'shared/, db/, queue/, events/, audit/ and limits/ import no feature, no identity plane and no job runtime',
    breaks: (from, to) =>
      LOW_LEVEL.some((dir) => from.startsWith(dir)) &&
      (to.startsWith('features/') || to.startsWith('identity/') || to.startsWith('jobs/')),
  },
  {
    name: 'shared/ imports nothing of access/: what it needs of a caller it states in its own terms',
    breaks: (from, to) => from.startsWith('shared/') && to.startsWith('access/'),
  },
  {
    name: "audit/ imports no HTTP part of access/ (the guard): an entry's actor is access's model",
    breaks: (from, to) => from.startsWith('audit/') && ACCESS_HTTP.test(to),
  },
  {
    name: 'access/ imports no feature and no identity plane: features hand the guard their resolvers',
    breaks: (from, to) =>
      from.startsWith('access/') && (to.startsWith('features/') || to.startsWith('identity/')),
  },
  {
    name: "access's model and scope rules are plain: they import nothing but each other (no HTTP, no identity)",
    breaks: (from, to) => ACCESS_PLAIN.test(from) && !ACCESS_PLAIN.test(to),
  },
  {
    name: 'a feature reaches access only through its public face (model.ts, scopes.ts, guard.ts)',
    breaks: (from, to) => from.startsWith('features/') && to.startsWith('access/') && !ACCESS_FACE.test(to),
  },
  {
    name: "a feature imports another feature's service (or model), never its repository, routes or pages",
    breaks: (from, to) => {
      const a = featureOf(from)
      const b = featureOf(to)
      return a !== null && b !== null && a !== b && !PUBLIC_FACE.test(to)
    },
  },
  {
    name: 'the identity plane imports no feature (features are wired to it in app.ts/server.ts)',
    breaks: (from, to) => from.startsWith('identity/') && to.startsWith('features/'),
  },
  {
    name: 'outside src/features, features are reached only through their list (features/index.ts)',
    breaks: (from, to) =>
      !from.startsWith('features/') &&
      to.startsWith('features/') &&
      to !== 'features/index.ts' &&
      // The CLI is a client of the API: its MCP tools take their inputs from the API's own TypeBox
      // models (one source of truth), and nothing else of a feature.
      !(from.startsWith('cli/') && /^features\/[^/]+\/model\.ts$/.test(to)),
  },
  {
    name: 'jobs call services, never routes or pages',
    breaks: (from, to) => from.startsWith('jobs/') && /^features\/[^/]+\/(routes|pages)/.test(to),
  },
]

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

function resolveImport(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null
  const base = resolve(dirname(file), spec)
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate
    } catch {
      // Try the next form.
    }
  }
  return null
}

/**
 * A computed `import(…)` can cross any wall unseen; only the job registry may load modules by path
 * (the extra job kinds a test passes in).
 */
const COMPUTED_IMPORT = /\bimport\(\s*[^'"`\s)]/

/**
 * One code path for both stores: only src/db names a driver or a dialect (tables are declared with
 * db/columns.ts), and transactions go through `store.tx`, never a driver's or drizzle's own.
 */
const DRIVER_MODULE =
  /^(bun:sqlite|drizzle-orm\/(sqlite-core|pg-core|bun-sql|bun-sqlite|sqlite-proxy)(\/.*)?)$/
const DRIVER_ACCESS = /\.transaction\(|\$client\b/
const MAY_IMPORT_BY_PATH = new Set(['jobs/registry.ts'])

/**
 * A job worker thread loads the jobs' modules (src/jobs/worker.ts and what it imports), not the
 * identity plane's provider: oidc-provider and Koa are ~13 MiB of a worker's memory, on every node,
 * for nothing a job does (identity/index.ts loads the plane only when it starts).
 */
const WORKER_ENTRY = join(src, 'jobs/worker.ts')
const NOT_IN_WORKERS = /^(oidc-provider|koa)(\/.*)?$/

/**
 * The chain of static imports from `entry` to a package `banned` matches, or null: what a thread
 * started at `entry` loads (dynamic imports load later, if ever, and type imports never).
 */
export function importChain(entry: string, banned: RegExp): string[] | null {
  const transpilers = { ts: new Bun.Transpiler({ loader: 'ts' }), tsx: new Bun.Transpiler({ loader: 'tsx' }) }
  const from = new Map<string, string | null>([[entry, null]])
  const queue = [entry]
  const chain = (file: string, last: string) => {
    const out = [last]
    for (let at: string | null = file; at; at = from.get(at) ?? null) out.unshift(`src/${relative(src, at)}`)
    return out
  }
  while (queue.length) {
    const file = queue.shift()!
    const code = readFileSync(file, 'utf8').replace(/^#!.*/, '')
    const imports = (file.endsWith('.tsx') ? transpilers.tsx : transpilers.ts).scanImports(code)
    for (const { path, kind } of imports) {
      if (kind !== 'import-statement') continue
      if (banned.test(path)) return chain(file, path)
      const target = resolveImport(file, path)
      if (target && /\.tsx?$/.test(target) && !from.has(target)) {
        from.set(target, file)
        queue.push(target)
      }
    }
  }
  return null
}

/**
 * Every module `code` names in an import or export, type-only ones and `import('…')` types included
 * (the scanner skips comments and strings).
 */
const importsOf = (code: string) => ts.preProcessFile(code, true, true).importedFiles.map((f) => f.fileName)

/**
 * One way to write a page: an HTML answer is `html()` (shared/views/respond.ts; the hosted pages'
 * `hostedHtml` is it), a page or fragment of the error mapping (shared/plugins/errors.ts), or what
 * oidc-provider draws through its page sources and error renderer (identity/pages/http.ts `render`,
 * identity/errors.tsx). Anything else that sets an HTML type or writes to a node:http response is a
 * second way.
 */
const PAGE_WRITERS: { pattern: RegExp; allowed: string[] }[] = [
  {
    pattern: /['"`]text\/html;/,
    allowed: ['shared/views/respond.ts', 'shared/plugins/errors.ts', 'identity/errors.tsx'],
  },
  { pattern: /\.type\s*=\s*['"]html['"]/, allowed: ['identity/pages/http.ts'] },
  { pattern: /\.writeHead\(/, allowed: ['identity/engine/inject.ts', 'identity/errors.tsx'] },
]
export const PAGE_RULE =
  "one way to write a page: html() or hostedHtml(), the error mapping, or oidc-provider's page sources"

/** The code of a module without what its template literals say (code shown as text, as a quickstart's). */
const withoutTemplates = (code: string) => code.replace(/`(?:\\[\s\S]|[^`\\])*`/g, '``')

/** `read` lets a test check source that is not on disk (no file written into the tree other runs read). */
export function violations(
  files = sourceFiles(src),
  read: (file: string) => string = (file) => readFileSync(file, 'utf8'),
): string[] {
  const out: string[] = []
  const loaded = importChain(WORKER_ENTRY, NOT_IN_WORKERS)
  if (loaded) out.push(`a job worker loads ${loaded.at(-1)}: ${loaded.join(' -> ')}`)
  for (const file of files) {
    const code = read(file).replace(/^#!.*/, '')
    const from = relative(src, file)
    if (COMPUTED_IMPORT.test(code) && !MAY_IMPORT_BY_PATH.has(from))
      out.push(`src/${from} imports a module by a computed path: walls must be visible to this check`)
    const running = withoutTemplates(code)
    for (const writer of PAGE_WRITERS) {
      if (!from.endsWith('.test.ts') && writer.pattern.test(running) && !writer.allowed.includes(from))
        out.push(`src/${from} writes a page a second way (${writer.pattern.source}): ${PAGE_RULE}`)
    }
    const inDb = from.startsWith('db/')
    if (!inDb && DRIVER_ACCESS.test(code))
      out.push(`src/${from} opens a transaction or the driver itself: use store.tx / store.query (src/db)`)
    for (const path of importsOf(code)) {
      if (!inDb && DRIVER_MODULE.test(path))
        out.push(
          `src/${from} imports ${path}: only src/db names a driver or a dialect (declare tables with db/columns.ts)`,
        )
      if (ACCESS_PLAIN.test(from) && !path.startsWith('.'))
        out.push(
          `src/${from} imports ${path}: access's model and scope rules are plain (no package, no HTTP)`,
        )
      const target = resolveImport(file, path)
      if (!target) continue
      const to = relative(src, target)
      for (const rule of RULES) {
        if (rule.breaks(from, to)) out.push(`src/${from} imports src/${to}: ${rule.name}`)
      }
    }
  }
  return out
}

if (import.meta.main) {
  const found = violations()
  for (const line of found) console.error(line)
  if (found.length > 0) {
    console.error(`check-walls: ${found.length} import(s) cross a wall`)
    process.exit(1)
  }
  console.log('check-walls: every import respects the walls')
}
