// legs: once — checks a copied project's files and generated migrations; no store
import { describe, expect, it } from 'bun:test'
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { tempDir } from './support/temp'

// Issue 24: adding a feature is its folder plus one line in the feature list. A throwaway feature
// ("notes": a table, a JSON route, a dashboard page with its navigation entry, a provisioning step
// and a teardown step, and its own test) is added to a copy of the project, registered in
// src/features/index.ts, and its migrations generated (`npm run db:generate`). Its test then runs
// in the copy on this leg's store: the route and page are served, a new workspace is provisioned
// with its row, and a deleted one leaves none. Nothing else in the copy may have changed.
const root = resolve(import.meta.dir, '..')
const COPIED = [
  'src',
  'db',
  'tests/support',
  'scripts',
  'public',
  'package.json',
  'tsconfig.json',
  'bunfig.toml',
  'drizzle.sqlite.config.ts',
  'drizzle.postgres.config.ts',
]

const FEATURE: Record<string, string> = {
  'schema.ts': `import { epochMs, table, text } from '../../db/columns'

export const notes = table('notes', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull(),
  body: text('body').notNull(),
  createdAt: epochMs('created_at').notNull(),
})
`,
  'index.ts': `import { eq } from 'drizzle-orm'
import { Elysia } from 'elysia'
import { newId } from '../../shared/ids'
import type { Feature } from '../feature'
import { notes } from './schema'

export const feature: Feature = {
  name: 'notes',
  routes: ({ core, auth }) =>
    new Elysia({ name: 'notes-routes' }).use(auth).get(
      '/v1/workspaces/:workspace_id/notes',
      async ({ workspace }) => {
        const items = await core.db.select().from(notes).where(eq(notes.workspaceId, workspace.id))
        return { items: items.map((n) => ({ id: n.id, body: n.body })), total: items.length }
      },
      { scope: 'workspace:read' },
    ),
  pages: ({ core, auth }) =>
    new Elysia({ name: 'notes-pages' }).use(auth).get(
      '/app/workspaces/:workspace_id/notes',
      async ({ workspace }) => {
        const items = await core.db.select().from(notes).where(eq(notes.workspaceId, workspace.id))
        const list = items.map((n) => \`<li>\${Bun.escapeHTML(n.body)}</li>\`).join('')
        return new Response(\`<h1>Notes</h1><ul>\${list}</ul>\`, { headers: { 'content-type': 'text/html' } })
      },
      { scope: 'workspace:read' },
    ),
  nav: [{ label: 'Notes', path: 'notes', place: 'sidebar', order: 15 }],
  provision: [
    {
      name: 'welcome-note',
      does: 'write the welcome note',
      run: async (core, w) => {
        await core.db
          .insert(notes)
          .values({ id: newId('note'), workspaceId: w.id, body: 'Welcome', createdAt: core.clock.now() })
      },
    },
  ],
  teardown: async (core, workspaceId) => {
    await core.db.delete(notes).where(eq(notes.workspaceId, workspaceId))
  },
}
`,
  'notes.test.ts': `import { afterAll, expect, it } from 'bun:test'
import { ManualClock } from '../../shared/clock'
import { startTestServer } from '../../../tests/support/server'
import { json, signUpUser } from '../../../tests/support/users'

const server = await startTestServer({}, undefined, { clock: new ManualClock(Date.now()) })
afterAll(() => server.stop())
const count = async (ws: string) =>
  Number((await server.core.store.query<{ n: number }>('SELECT COUNT(*) AS n FROM notes WHERE workspace_id = $1', [ws]))[0]?.n)

it('is served, provisioned and torn down', async () => {
  const owner = await signUpUser(server, { email: 'o@example.com', password: 'an owner password', name: 'O' })
  const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Notes' })
  const ws = created.body.id as string
  await server.tick()
  expect((await json(owner.agent, 'GET', \`/v1/workspaces/\${ws}\`)).body.state).toBe('active')
  const listed = await json(owner.agent, 'GET', \`/v1/workspaces/\${ws}/notes\`)
  expect(listed.status).toBe(200)
  expect(listed.body.items.map((n: { body: string }) => n.body)).toEqual(['Welcome'])
  const page = await owner.agent.request(\`/app/workspaces/\${ws}/notes\`)
  expect(page.status).toBe(200)
  expect(await page.text()).toContain('<li>Welcome</li>')
  const home = await (await owner.agent.request(\`/app/workspaces/\${ws}\`)).text()
  expect(home).toContain(\`href="/app/workspaces/\${ws}/notes"\`)
  expect(await count(ws)).toBe(1)
  expect((await json(owner.agent, 'DELETE', \`/v1/workspaces/\${ws}\`, { confirm: 'Notes' })).status).toBe(202)
  await server.tick()
  expect(await count(ws)).toBe(0)
})
`,
}

function filesUnder(dir: string, base = dir): Map<string, string> {
  const out = new Map<string, string>()
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (name === 'node_modules') continue
    if (statSync(path).isDirectory()) for (const [k, v] of filesUnder(path, base)) out.set(k, v)
    else out.set(relative(base, path), Bun.hash(readFileSync(path)).toString())
  }
  return out
}

function run(cwd: string, args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync([process.execPath, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() }
}

describe('a new feature', () => {
  it('is its folder plus one line in the feature list: served, provisioned and torn down', async () => {
    const copy = tempDir('gatehouse-dry-run-')
    for (const part of COPIED) cpSync(join(root, part), join(copy, part), { recursive: true })
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'))
    const before = filesUnder(copy)

    // The folder…
    mkdirSync(join(copy, 'src/features/notes'))
    for (const [name, text] of Object.entries(FEATURE))
      writeFileSync(join(copy, 'src/features/notes', name), text)
    // …and its line in the list.
    const list = join(copy, 'src/features/index.ts')
    const source = readFileSync(list, 'utf8')
    writeFileSync(
      list,
      source
        .replace(
          `import { feature as users } from './users'\n`,
          (m) => `${m}import { feature as notes } from './notes'\n`,
        )
        .replace(/(export const features: Feature\[\] = \[[^\]]*)\]/, '$1  notes,\n]'),
    )
    // The migrations of both stores, as `npm run db:generate` makes them.
    for (const dialect of ['sqlite', 'postgres']) {
      const gen = run(copy, [
        '--bun',
        'node_modules/.bin/drizzle-kit',
        'generate',
        '--config',
        `drizzle.${dialect}.config.ts`,
      ])
      expect(gen.out).toContain('Your SQL migration file')
      expect(gen.code).toBe(0)
    }

    const walls = run(copy, ['scripts/check-walls.ts'])
    expect(walls.out).toContain('every import respects the walls')
    const test = run(copy, ['test', 'src/features/notes'])
    expect(test.out).toContain(' 1 pass')
    expect(test.out).toContain(' 0 fail')
    expect(test.code).toBe(0)

    // What changed outside the folder: the list (by one import and one entry) and generated migrations.
    const after = filesUnder(copy)
    const changed = [...after].filter(([path, hash]) => before.get(path) !== hash).map(([path]) => path)
    const outside = changed.filter(
      (p) => !p.startsWith('src/features/notes/') && !p.startsWith('db/migrations/'),
    )
    expect(outside).toEqual(['src/features/index.ts'])
    const added = readFileSync(list, 'utf8')
      .split('\n')
      .filter((line) => !source.split('\n').includes(line))
    expect(added).toHaveLength(2)
    expect(
      changed
        .filter((p) => p.startsWith('db/migrations/'))
        .every((p) => /\/(\d{4}_\w+\.sql|meta\/.+\.json)$/.test(p)),
    ).toBe(true)
  }, 120_000)
})
