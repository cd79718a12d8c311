// legs: once — reads the import graph; no store
import { describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { importChain, PAGE_RULE, RULES, violations } from '../scripts/check-walls'

const rule = (start: string) => RULES.find((r) => r.name.startsWith(start))?.name ?? `no rule "${start}"`
const LOW_RULE = rule('shared/, db/')
const SHARED_RULE = rule('shared/ imports nothing of access')
const AUDIT_RULE = rule('audit/ imports no HTTP part')
const ACCESS_FACE_RULE = rule('a feature reaches access')
const broken = (from: string, to: string) => RULES.filter((r) => r.breaks(from, to)).map((r) => r.name)

describe('the walls of ARCHITECTURE.md (scripts/check-walls.ts)', () => {
  it('hold on the source tree as it is', () => {
    expect(violations()).toEqual([])
  })

  it('read type imports too: a type from the identity plane in shared/ breaks a wall', () => {
    // Each form a type can be imported in; the transpiler drops all three, the walls must not.
    const forms = {
      'import-type': "import type { Account } from '../identity'\nexport type A = Account\n",
      'inline-type': "import { type Account } from '../identity'\nexport type A = Account\n",
      'import-call-type': "export type A = import('../identity').Account\n",
    }
    // Checked as if they sat in src/shared, without writing them there: other test files read the tree.
    const dir = join(import.meta.dir, '../src/shared')
    const seeded = new Map(
      Object.entries(forms).map(([form, code]) => [join(dir, `walls-seed-${form}.ts`), code]),
    )
    const found = violations([...seeded.keys()], (file) => seeded.get(file) ?? '')
    expect(found).toHaveLength(seeded.size)
    for (const [i, form] of Object.keys(forms).entries())
      expect(found[i]).toBe(`src/shared/walls-seed-${form}.ts imports src/identity/index.ts: ${LOW_RULE}`)
    expect(existsSync(join(dir, 'walls-seed-import-type.ts'))).toBe(false)
  })

  it('allow one way to write a page: html() or hostedHtml(), not an HTML type set by hand or a node:http write', () => {
    const dir = join(import.meta.dir, '../src/features/notes')
    const seeded = new Map([
      [
        join(dir, 'by-hand.ts'),
        "export const page = () => new Response('<p>hi</p>', { headers: { 'content-type': 'text/html; charset=utf-8' } })\n",
      ],
      [join(dir, 'node-write.ts'), 'export const page = (res: any) => res.writeHead(200, {})\n'],
      [join(dir, 'koa-page.ts'), "export const page = (ctx: any) => { ctx.type = 'html' }\n"],
      // Code shown as text (a quickstart's snippet) is no page of ours.
      [join(dir, 'snippet.ts'), 'export const snippet = `res.writeHead(200); res.end("ok")`\n'],
      [
        join(dir, 'pages.tsx'),
        "import { html } from '../../shared/views/respond'\nexport const page = () => html('<p>hi</p>')\n",
      ],
    ])
    const found = violations([...seeded.keys()], (file) => seeded.get(file) ?? '')
    expect(found.map((line) => line.split(' ')[0])).toEqual([
      'src/features/notes/by-hand.ts',
      'src/features/notes/node-write.ts',
      'src/features/notes/koa-page.ts',
    ])
    for (const line of found) expect(line).toEndWith(PAGE_RULE)
  })

  it('keep shared/ out of access, and audit/ out of its HTTP parts; features use its public face', () => {
    for (const to of ['access/model.ts', 'access/scopes.ts', 'access/guard.ts', 'access/registry.ts'])
      expect(broken('shared/views/respond.ts', to)).toContain(SHARED_RULE)
    expect(broken('audit/record.ts', 'access/model.ts')).toEqual([])
    for (const to of ['access/guard.ts', 'access/route-path.ts'])
      expect(broken('audit/record.ts', to)).toContain(AUDIT_RULE)
    expect(broken('audit/record.ts', 'identity/index.ts')).toContain(LOW_RULE)
    for (const to of ['access/model.ts', 'access/scopes.ts', 'access/guard.ts'])
      expect(broken('features/apps/service.ts', to)).toEqual([])
    expect(broken('features/apps/routes.ts', 'access/route-path.ts')).toContain(ACCESS_FACE_RULE)
    // The access model is plain: it names neither the identity plane nor HTTP.
    expect(broken('access/guard.ts', 'identity/index.ts')).toContain(
      rule('access/ imports no feature and no identity plane'),
    )
    expect(broken('access/model.ts', 'access/guard.ts')).toContain(rule("access's model and scope rules"))
    expect(broken('access/model.ts', 'access/scopes.ts')).toEqual([])
  })

  it('refuse app.ts, the server or the job registry reaching into a feature folder', () => {
    for (const from of ['app.ts', 'server.ts', 'jobs/registry.ts', 'main.ts']) {
      for (const to of ['features/apps/routes.ts', 'features/apps/service.ts', 'features/mail/jobs.ts']) {
        expect(broken(from, to)).toContain(
          'outside src/features, features are reached only through their list (features/index.ts)',
        )
      }
    }
  })

  it("let the CLI (an API client) read a feature's models, and nothing else of it", () => {
    expect(broken('cli/mcp/catalog.ts', 'features/apps/model.ts')).toEqual([])
    for (const to of ['features/apps/service.ts', 'features/apps/routes.ts', 'features/apps/schema.ts'])
      expect(broken('cli/mcp/catalog.ts', to)).toContain(
        'outside src/features, features are reached only through their list (features/index.ts)',
      )
  })

  it('let them read the feature list', () => {
    for (const from of ['app.ts', 'server.ts', 'jobs/registry.ts'])
      expect(broken(from, 'features/index.ts')).toEqual([])
  })

  it("refuse a feature reaching into another feature's routes, but not its service", () => {
    expect(broken('features/users/index.ts', 'features/apps/routes.ts')).toHaveLength(1)
    expect(broken('features/auth/index.ts', 'features/workspaces/service.ts')).toEqual([])
  })

  it('keep oidc-provider out of a job worker thread, and find it where it is loaded', () => {
    const src = join(import.meta.dir, '../src')
    const provider = /^oidc-provider(\/.*)?$/
    expect(importChain(join(src, 'jobs/worker.ts'), provider)).toBeNull()
    // The check can see it: the plane loads it, through a chain it names from the entry on.
    const chain = importChain(join(src, 'identity/engine/start.ts'), provider)
    expect(chain?.[0]).toBe('src/identity/engine/start.ts')
    expect(chain?.at(-1)).toMatch(provider)
    // Only a static import loads a module with the thread: identity/index.ts loads the plane lazily.
    expect(importChain(join(src, 'identity/index.ts'), provider)).toBeNull()
  })
})
