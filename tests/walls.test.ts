// legs: once — reads the import graph; no store
import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { importChain, RULES, violations } from '../scripts/check-walls'

const broken = (from: string, to: string) => RULES.filter((r) => r.breaks(from, to)).map((r) => r.name)

describe('the walls of ARCHITECTURE.md (scripts/check-walls.ts)', () => {
  it('hold on the source tree as it is', () => {
    expect(violations()).toEqual([])
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
    const chain = importChain(join(src, 'identity/plane.ts'), provider)
    expect(chain?.[0]).toBe('src/identity/plane.ts')
    expect(chain?.at(-1)).toMatch(provider)
    // Only a static import loads a module with the thread: identity/index.ts loads the plane lazily.
    expect(importChain(join(src, 'identity/index.ts'), provider)).toBeNull()
  })
})
