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
// with its row, and a deleted one leaves none. Issue 59: through its identity extension alone it
// also adds a grant type, a claim, an endpoint under each instance and two interaction steps, and
// a real sign-in and token requests find them. Nothing else in the copy may have changed.
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
  'errors.ts': `import { defineErrorCodes } from '../../shared/errors'

export const NoteErrors = defineErrorCodes({ NOTE_MISSING: 'Send the note to exchange' })
`,
  'index.ts': `import { count, eq } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import type { Core } from '../../core'
import { type InteractionStep, instanceEndpoints } from '../../identity'
import { appError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Feature } from '../feature'
import { NoteErrors } from './errors'
import { notes } from './schema'

const notesOf = async (core: Core, workspaceId: string) =>
  Number((await core.db.select({ n: count() }).from(notes).where(eq(notes.workspaceId, workspaceId)))[0]?.n)

/** A step shown when the app asks for the notes scope: a page with one button, then done. */
const step = (name: string, order: number, title: string): InteractionStep => ({
  name,
  order,
  check: ({ scopes }) => scopes.includes('notes'),
  page: async (req) =>
    req.method === 'POST'
      ? { done: true }
      : { html: \`<h1>\${title}</h1><form method="post" action="\${Bun.escapeHTML(req.action)}"><button>OK</button></form>\` },
})

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
  identity: (core) => ({
    claims: [
      { scope: 'notes', claims: ['notes_count'], read: async (id) => ({ notes_count: await notesOf(core, id) }) },
    ],
    grants: [
      {
        type: 'urn:example:params:oauth:grant-type:note',
        parameters: ['note'],
        handle: async ({ instance, params, issueAccessToken }) => {
          if (!params.note) throw appError(NoteErrors.NOTE_MISSING, 400)
          return { ...(await issueAccessToken()), note: params.note, issuer: instance.issuer }
        },
      },
    ],
    endpoints: [
      instanceEndpoints('notes-endpoints').get(
        '/notes-count',
        async ({ instance, query }) => {
          const n = await notesOf(core, instance.id)
          return { issuer: instance.issuer, count: n, enough: n >= query.min }
        },
        { query: t.Object({ min: t.Numeric() }) },
      ),
    ],
    // Listed out of order: the welcome (10) is shown before the terms (20).
    steps: [step('notes-terms', 20, 'Notes terms'), step('notes-welcome', 10, 'Notes welcome')],
  }),
}
`,
  'notes.test.ts': `import { afterAll, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import * as oidc from 'openid-client'
import { accounts, signUp } from '../../identity'
import { ManualClock } from '../../shared/clock'
import { Agent } from '../../../tests/support/browserless'
import { registerApp } from '../../../tests/support/instances'
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

it('extends the identity engine: a grant type, a claim, an endpoint and two steps', async () => {
  const owner = await signUpUser(server, { email: 'e@example.com', password: 'an owner password', name: 'E' })
  const ws = (await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Engine' })).body.id as string
  await server.tick()
  const issuer = \`\${server.baseUrl}/i/\${ws}\`
  const redirectUri = 'https://rp.example.com/cb'
  const app = await registerApp(server.core, ws, { type: 'web', redirectUris: [redirectUri] })
  const basic = \`Basic \${btoa(\`\${app.clientId}:\${app.clientSecret}\`)}\`
  const token = (body: Record<string, string>) =>
    fetch(\`\${issuer}/token\`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    })

  // The grant type: the feature's answer, with a token the instance issued.
  const granted = await token({ grant_type: 'urn:example:params:oauth:grant-type:note', note: 'hello' })
  expect(granted.status).toBe(200)
  const grant = await granted.json()
  expect(grant).toMatchObject({ note: 'hello', issuer, token_type: 'Bearer' })
  expect(typeof grant.access_token).toBe('string')
  const refused = await token({ grant_type: 'urn:example:params:oauth:grant-type:note' })
  expect(refused.status).toBe(400)
  expect(await refused.json()).toMatchObject({ error: 'invalid_grant', error_description: 'Send the note to exchange' })

  // The endpoint under the instance, its query validated.
  const counted = await fetch(\`\${issuer}/notes-count?min=1\`)
  expect(counted.status).toBe(200)
  expect(await counted.json()).toEqual({ issuer, count: 1, enough: true })
  expect((await fetch(\`\${issuer}/notes-count?min=many\`)).status).toBe(422)

  // A sign-in asking for the notes scope: both steps, in their order, then the claim in the ID token.
  const ada = await signUp(server.core, ws, { email: 'ada@example.com', password: 'correct horse battery' })
  // The workspace's policy asks for a verified address first: taken as verified here.
  await server.core.db.update(accounts).set({ emailVerified: true }).where(eq(accounts.id, ada.id))
  const verifier = oidc.randomPKCECodeVerifier()
  const authorize = new URL(\`\${issuer}/auth\`)
  authorize.search = new URLSearchParams({
    client_id: app.clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid notes',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()
  const agent = new Agent(server.baseUrl)
  const form = await agent.follow(authorize)
  const atRp = (u: URL) => u.href.startsWith(redirectUri)
  const fields = { email: 'ada@example.com', password: 'correct horse battery' }
  const welcome = await agent.submit(await form.res.text(), form.url, '/login', fields)
  const welcomePage = await welcome.res.text()
  expect(welcomePage).toContain('<h1>Notes welcome</h1>')
  const terms = await agent.submit(welcomePage, welcome.url, '/step', {})
  const termsPage = await terms.res.text()
  expect(termsPage).toContain('<h1>Notes terms</h1>')
  const back = await agent.submit(termsPage, terms.url, '/step', {}, atRp)
  const code = back.url.searchParams.get('code')
  expect(code).toBeTruthy()
  const exchanged = await token({
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: redirectUri,
    code_verifier: verifier,
  })
  expect(exchanged.status).toBe(200)
  const idToken = (await exchanged.json()).id_token as string
  const claims = JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString())
  expect(claims.notes_count).toBe(1)
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
  it('is its folder plus one line in the feature list: served, provisioned, torn down and extending the identity engine', async () => {
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
    expect(test.out).toContain(' 2 pass')
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
