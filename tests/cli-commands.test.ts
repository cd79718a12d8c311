import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Command } from 'commander'
import { buildProgram } from '../src/cli/program'
import { addServerCommands } from '../src/cli/server-commands'
import { sharedBrowser } from './support/browser'
import { runCli, spawnCli } from './support/cli'
import { tempDir } from './support/core'
import { startTestServer, type TestServer } from './support/server'
import { type Json, json, type PlatformUser, signUpUser, waitForState } from './support/users'

// Issue 58, item 1: `gatehouse …` as a client of a running server, run as a child process the way
// a person or a script runs it. Its login comes from the device flow approved in headless Chromium;
// whatever a command changes is checked through the API with the owner's own session.
// The workspace limit is SPEC's 60 a minute and batches 2 a minute (the test servers' default is
// no limit), for the exit code of a 429 and the backoff that honours Retry-After.
let server: TestServer
let owner: PlatformUser
const user = { email: 'cli-owner@example.com', password: 'a long password 58', name: 'Cleo' }
const configDir = tempDir('gatehouse-cli-config-')
const work = tempDir('gatehouse-cli-work-')
let env: Record<string, string>
let workspaceId = ''
/** A workspace of its own for the rate-limit tests. */
let busyId = ''

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_WORKSPACE_PER_MINUTE: '60', RATE_LIMIT_BATCH_PER_MINUTE: '2' })
  owner = await signUpUser(server, user)
  busyId = (await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Busy' })).body.id
  env = { GATEHOUSE_URL: server.baseUrl, GATEHOUSE_CONFIG_DIR: configDir }
})
afterAll(() => server.stop())

const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra })
const credentials = () => JSON.parse(readFileSync(join(configDir, 'credentials.json'), 'utf8'))
const api = (method: string, path: string, body?: unknown) => json(owner.agent, method, path, body)
/** A command's --json answer, once it exited 0. */
async function jsonOf(args: string[], extra: Record<string, string> = {}): Promise<Json> {
  const run = await cli([...args, '--json'], extra)
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) })
  return JSON.parse(run.stdout)
}

describe('gatehouse login', () => {
  it('shows the code and its link, is approved in Chromium, and keeps the login 0600', async () => {
    const login = spawnCli(['login'], env)
    const [, link] = await login.waitFor('stderr', /Or open this link, which carries the code: (\S+)/)
    expect(login.output.stderr).toMatch(/open \S+\/device and enter the code: [A-Z0-9-]+/)

    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    await page.goto(link!)
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.getByLabel('Email').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Device connected' }).waitFor()
    await context.close()

    const done = await login.exited
    expect(done.code).toBe(0)
    expect(done.stdout).toBe(`Logged in as ${user.email} (${user.name}) on ${server.baseUrl}\n`)
    expect(statSync(join(configDir, 'credentials.json')).mode & 0o777).toBe(0o600)
    const stored = credentials().logins[server.baseUrl]
    const me = await fetch(`${server.baseUrl}/v1/auth/me`, {
      headers: { authorization: `Bearer ${stored.access_token}` },
    })
    expect(await me.json()).toMatchObject({ email: user.email, auth: 'bearer' })
    expect(stored.refresh_token).toBeTruthy()
  }, 60_000)

  it('refreshes an expired access token with the refresh token, and keeps the rotated one', async () => {
    const before = credentials()
    before.logins[server.baseUrl].expires_at = 0
    writeFileSync(join(configDir, 'credentials.json'), JSON.stringify(before), { mode: 0o600 })

    expect(await jsonOf(['whoami'])).toMatchObject({ kind: 'user', email: user.email, id: owner.id })
    const after = credentials().logins[server.baseUrl]
    const old = before.logins[server.baseUrl]
    expect(after.access_token).not.toBe(old.access_token)
    expect(after.refresh_token).not.toBe(old.refresh_token)
    expect(after.expires_at).toBeGreaterThan(Date.now() + 60_000)
    const me = await fetch(`${server.baseUrl}/v1/auth/me`, {
      headers: { authorization: `Bearer ${after.access_token}` },
    })
    expect(me.status).toBe(200)
  })
})

describe('gatehouse workspaces, apps, keys, tenants and audit', () => {
  it('creates a workspace and waits until it is active', async () => {
    const ws = await jsonOf(['workspaces', 'create', 'CLI Co'])
    expect(ws).toMatchObject({ name: 'CLI Co', state: 'active' })
    workspaceId = ws.id
    expect((await api('GET', `/v1/workspaces/${workspaceId}`)).body).toMatchObject({ state: 'active' })

    const table = await cli(['workspaces', 'list'])
    expect(table.code).toBe(0)
    const [header, row] = table.stdout.split('\n')
    expect(header).toMatch(/^ID {36}NAME {4}STATE {3}PLAN {2}CREATED$/)
    expect(row).toStartWith(`${workspaceId}  CLI Co  active  free  `)
  }, 30_000)

  it('creates an app in a workspace named by its name', async () => {
    const app = await jsonOf([
      'apps',
      'create',
      'Shop',
      '--redirect-uri',
      'https://shop.example.com/callback',
      '-w',
      'CLI Co',
    ])
    expect(app).toMatchObject({ name: 'Shop', app_type: 'web', client_secret: expect.any(String) })
    const listed = (await api('GET', `/v1/workspaces/${workspaceId}/apps`)).body.items
    expect(listed).toEqual([expect.objectContaining({ client_id: app.client_id, name: 'Shop' })])
  })

  it('gets, updates and rotates the secret of an app; the API shows each change', async () => {
    const [app] = (await api('GET', `/v1/workspaces/${workspaceId}/apps`)).body.items
    expect(await jsonOf(['apps', 'get', app.id, '-w', workspaceId])).toMatchObject({
      id: app.id,
      name: 'Shop',
      redirect_uris: ['https://shop.example.com/callback'],
    })
    const updated = await jsonOf([
      'apps',
      'update',
      app.id,
      '--name',
      'Shop 2',
      '--redirect-uri',
      'https://shop.example.com/cb2',
      '-w',
      workspaceId,
    ])
    expect(updated).toMatchObject({ name: 'Shop 2', redirect_uris: ['https://shop.example.com/cb2'] })
    expect((await api('GET', `/v1/workspaces/${workspaceId}/apps/${app.id}`)).body).toMatchObject({
      name: 'Shop 2',
      redirect_uris: ['https://shop.example.com/cb2'],
    })
    const rotated = await jsonOf(['apps', 'rotate-secret', app.id, '--grace-hours', '1', '-w', workspaceId])
    expect(rotated).toMatchObject({
      client_id: app.client_id,
      client_secret: expect.any(String),
      previous_secret_expires_at: expect.any(String),
    })
    const audit = (await api('GET', `/v1/workspaces/${workspaceId}/audit-log?action=app.secret_rotated`)).body
    expect(audit.items).toEqual([expect.objectContaining({ action: 'app.secret_rotated' })])
    // A public client has no secret to rotate: the API's 409, exit 1.
    const spa = await jsonOf([
      'apps',
      'create',
      'Spa',
      '--type',
      'spa',
      '--redirect-uri',
      'https://spa.example.com/cb',
      '-w',
      workspaceId,
    ])
    const refused = await cli(['apps', 'rotate-secret', spa.id, '-w', workspaceId])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('409')
    await jsonOf(['apps', 'delete', spa.id, '-w', workspaceId])
    // As the tests after this one expect it.
    await jsonOf(['apps', 'update', app.id, '--name', 'Shop', '-w', workspaceId])
  })

  it('creates a machine key, writes its key file 0600 and prints the path; the file then works', async () => {
    const out = join(work, 'ci.json')
    const run = await cli([
      'keys',
      'create',
      'ci',
      '--scope',
      'workspace:admin',
      '--out',
      out,
      '-w',
      workspaceId,
    ])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(`${out}\n`)
    expect(statSync(out).mode & 0o777).toBe(0o600)
    const file = JSON.parse(readFileSync(out, 'utf8'))
    expect(file).toMatchObject({ type: 'service_account', workspace_id: workspaceId })
    const keys = (await api('GET', `/v1/workspaces/${workspaceId}/machine-keys`)).body.items
    expect(keys).toEqual([expect.objectContaining({ id: file.key_id, name: 'ci', status: 'active' })])

    // --key-file: machine auth, in the key's workspace without -w.
    const me = await jsonOf(['whoami', '--key-file', out])
    expect(me).toMatchObject({ kind: 'machine_key', id: file.key_id, workspace_id: workspaceId })
    const apps = await jsonOf(['apps', 'list'], { SERVICE_MACHINE_KEY_PATH: out })
    expect(apps.items.map((a: Json) => a.name)).toEqual(['Shop'])
  })

  it('creates tenants from a batch file; a batch on stdin with a failed item exits 1 with its results', async () => {
    const file = join(work, 'tenants.json')
    writeFileSync(
      file,
      JSON.stringify([
        { slug: 'north', name: 'North' },
        { slug: 'south', name: 'South' },
      ]),
    )
    const batch = await jsonOf(['tenants', 'batch', file, '-w', workspaceId])
    expect(batch).toMatchObject({ created: 2, failed: 0 })
    const tenants = (await api('GET', `/v1/workspaces/${workspaceId}/tenants`)).body.items
    expect(tenants.map((t: Json) => t.slug).sort()).toEqual(['north', 'south'])

    const again = JSON.stringify([
      { slug: 'north', name: 'Again' },
      { slug: 'east', name: 'East' },
    ])
    const partial = await runCli(['tenants', 'batch', '-', '-w', workspaceId, '--json'], env, again)
    expect(partial.code).toBe(1)
    expect(JSON.parse(partial.stdout)).toMatchObject({ created: 1, failed: 1 })
    expect(partial.stderr).toBe('gatehouse: 1 of 2 tenants failed\n')
  })

  it('prints the audit log oldest first, one JSON object a line, as the API has it', async () => {
    const run = await cli(['audit', 'tail', '-w', workspaceId, '--json'])
    expect(run.code).toBe(0)
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    const logged = (await api('GET', `/v1/workspaces/${workspaceId}/audit-log?limit=20`)).body.items
    expect(lines).toEqual([...logged].reverse())
    expect(lines.map((e: Json) => e.action)).toEqual(
      expect.arrayContaining(['app.created', 'machine_key.created', 'tenant.created']),
    )
  })

  it('follows the audit log: an entry made afterwards is printed, and an interrupt exits 0', async () => {
    const tail = spawnCli(['audit', 'tail', '-w', workspaceId, '--follow', '--interval', '1', '--json'], env)
    await tail.waitFor('stdout', /"tenant\.created"/)
    const created = await api('POST', `/v1/workspaces/${workspaceId}/tenants`, { slug: 'west', name: 'West' })
    expect(created.status).toBe(201)
    await tail.waitFor('stdout', new RegExp(`"id":"${created.body.id}"`))
    tail.proc.kill('SIGINT')
    const done = await tail.exited
    expect(done.code).toBe(0)
    const followed = done.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(followed.filter((e: Json) => e.target.id === created.body.id)).toEqual([
      expect.objectContaining({ action: 'tenant.created' }),
    ])
  }, 30_000)
})

describe('the other commands', () => {
  it('members add, list and remove (by email)', async () => {
    const added = await jsonOf([
      'members',
      'add',
      'friend@example.com',
      '--role',
      'viewer',
      '-w',
      workspaceId,
    ])
    expect(added).toMatchObject({ email: 'friend@example.com', role: 'viewer', status: 'invited' })
    const listed = await jsonOf(['members', 'list', '-w', workspaceId])
    expect(listed.items.map((m: Json) => m.email)).toEqual([user.email, 'friend@example.com'])
    expect((await cli(['members', 'remove', 'friend@example.com', '-w', workspaceId])).code).toBe(0)
    const members = (await api('GET', `/v1/workspaces/${workspaceId}/members`)).body.items
    expect(members.map((m: Json) => m.email)).toEqual([user.email])
  })

  it('webhooks create, list, deliveries and redeliver; tenants create and list', async () => {
    const hook = await jsonOf([
      'webhooks',
      'create',
      'https://hooks.example.com/cli',
      '--event',
      'tenant.created,tenant.deleted',
      '-w',
      workspaceId,
    ])
    expect(hook).toMatchObject({ events: ['tenant.created', 'tenant.deleted'], secret: expect.any(String) })
    expect((await jsonOf(['webhooks', 'list', '-w', workspaceId])).items).toEqual([
      expect.objectContaining({ id: hook.id, url: 'https://hooks.example.com/cli' }),
    ])
    const tenant = await jsonOf(['tenants', 'create', 'hooked', '--name', 'Hooked', '-w', workspaceId])
    expect(tenant).toMatchObject({ slug: 'hooked', name: 'Hooked' })
    const found = await jsonOf(['tenants', 'list', '--search', 'hoo', '-w', workspaceId])
    expect(found.items.map((t: Json) => t.id)).toEqual([tenant.id])

    const deliveries = await jsonOf(['webhooks', 'deliveries', hook.id, '-w', workspaceId])
    expect(deliveries.items).toEqual([expect.objectContaining({ event_type: 'tenant.created' })])
    const again = await jsonOf(['webhooks', 'redeliver', hook.id, deliveries.items[0].id, '-w', workspaceId])
    expect(again).toMatchObject({ id: deliveries.items[0].id })
  })

  it('keys rotate (a new key file) and revoke', async () => {
    const first = JSON.parse(readFileSync(join(work, 'ci.json'), 'utf8'))
    const out = join(work, 'rotated.json')
    const run = await cli(['keys', 'rotate', first.key_id, '--out', out, '-w', workspaceId])
    expect(run).toMatchObject({ code: 0, stdout: `${out}\n` })
    expect(statSync(out).mode & 0o777).toBe(0o600)
    const rotated = JSON.parse(readFileSync(out, 'utf8'))
    expect((await cli(['keys', 'revoke', rotated.key_id, '-w', workspaceId])).code).toBe(0)
    const keys = (await api('GET', `/v1/workspaces/${workspaceId}/machine-keys`)).body.items
    expect(keys).toEqual([expect.objectContaining({ id: first.key_id, status: 'rotating' })])
    expect((await jsonOf(['keys', 'list', '-w', workspaceId])).items.map((k: Json) => k.id)).toEqual([
      first.key_id,
    ])
  })

  it('workspaces rename and get', async () => {
    expect(await jsonOf(['workspaces', 'rename', workspaceId, 'CLI Co 2'])).toMatchObject({
      name: 'CLI Co 2',
    })
    expect((await api('GET', `/v1/workspaces/${workspaceId}`)).body.name).toBe('CLI Co 2')
    await jsonOf(['workspaces', 'rename', 'CLI Co 2', 'CLI Co'])
    expect(await jsonOf(['workspaces', 'get', 'CLI Co'])).toMatchObject({ id: workspaceId, name: 'CLI Co' })
  })
})

describe('exit codes', () => {
  it('2 for a usage error: an unknown option, a missing argument, a delete with no one to ask', async () => {
    const unknown = await cli(['workspaces', 'list', '--colour'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toStartWith("gatehouse: unknown option '--colour'\n")
    expect((await cli(['apps', 'get', '-w', workspaceId])).code).toBe(2)

    const refused = await cli(['workspaces', 'delete', workspaceId])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe(
      'gatehouse: deleting needs --confirm "CLI Co" when no one is at the terminal\n',
    )
    const wrong = await cli(['workspaces', 'delete', workspaceId, '--confirm', 'cli co'])
    expect(wrong.code).toBe(1)
    expect((await api('GET', `/v1/workspaces/${workspaceId}`)).body.state).toBe('active')
  })

  it('1 for an answer the server refused, with its reason', async () => {
    const run = await cli(['apps', 'create', 'Bad', '--redirect-uri', 'not a uri', '-w', workspaceId])
    expect(run.code).toBe(1)
    expect(run.stderr).toStartWith(`gatehouse: POST /v1/workspaces/${workspaceId}/apps: 422 `)
  })

  it('3 when not logged in, or when the key file cannot be used', async () => {
    const none = await cli(['whoami'], { GATEHOUSE_CONFIG_DIR: tempDir() })
    expect(none.code).toBe(3)
    expect(none.stderr).toBe(
      `gatehouse: not logged in to ${server.baseUrl}: run \`gatehouse login\`, or pass --key-file\n`,
    )
    const missing = await cli(['apps', 'list', '--key-file', join(work, 'nope.json')])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toBe(`gatehouse: machine key ${join(work, 'nope.json')}: no such file\n`)
  })

  it('4 for a workspace that does not exist, by id or by name', async () => {
    expect((await cli(['workspaces', 'get', crypto.randomUUID()])).code).toBe(4)
    const byName = await cli(['apps', 'list', '-w', 'Nowhere'])
    expect(byName).toMatchObject({ code: 4, stderr: 'gatehouse: no workspace named "Nowhere"\n' })
  })

  it('5 when still rate limited after the retries it was given', async () => {
    // The batch limit is 2 a minute here: the third batch waits 30 s (Retry-After), past 0 retries.
    await waitForState(owner.agent, busyId, 'active')
    const batch = (slug: string) => [{ slug, name: slug }]
    const path = `/v1/workspaces/${busyId}/tenants:batch`
    expect((await api('POST', path, batch('one'))).status).toBe(200)
    expect((await api('POST', path, batch('two'))).status).toBe(200)
    const file = join(work, 'three.json')
    writeFileSync(file, JSON.stringify(batch('three')))
    const limited = await cli(['tenants', 'batch', file, '-w', busyId], { GATEHOUSE_RETRIES: '0' })
    expect(limited.code).toBe(5)
    expect(limited.stderr).toStartWith(`gatehouse: POST ${path}: 429 `)
    const tenants = (await api('GET', `/v1/workspaces/${busyId}/tenants`)).body.items
    expect(tenants.map((t: Json) => t.slug).sort()).toEqual(['one', 'two'])
  })

  it('tries a 429 again after its Retry-After (SPEC backoff), and then succeeds', async () => {
    // The workspace limit is 60 a minute: one call comes back each second. The test keeps taking
    // them until the CLI was refused once, so its first try meets an empty bucket.
    const read = () => api('GET', `/v1/workspaces/${busyId}`)
    while ((await read()).status !== 429) {}
    const run = spawnCli(['workspaces', 'get', busyId, '--json'], env)
    let draining = true
    const drainer = (async () => {
      while (draining) await read()
    })()
    await run.waitFor('stderr', /trying again/)
    draining = false
    await drainer
    const done = await run.exited
    expect(done.code).toBe(0)
    expect(done.stderr).toMatch(
      /^(gatehouse: the server is busy or rate limiting; trying again in \d\.\d s\n)+$/,
    )
    expect(JSON.parse(done.stdout)).toMatchObject({ id: busyId, name: 'Busy' })
  }, 30_000)

  it('0 for a delete confirmed by name, which the API then shows deleting', async () => {
    const run = await cli(['workspaces', 'delete', 'CLI Co', '--confirm', 'CLI Co', '--json'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ id: workspaceId, state: 'deleting' })
    expect([404, 200]).toContain((await api('GET', `/v1/workspaces/${workspaceId}`)).status)
  })
})

describe('gatehouse logout', () => {
  it('forgets the login and revokes its refresh token; then commands exit 3', async () => {
    const { refresh_token, client_id } = credentials().logins[server.baseUrl]
    expect((await cli(['logout'])).stdout).toBe(`Logged out of ${server.baseUrl}\n`)
    expect(credentials().logins[server.baseUrl]).toBeUndefined()
    const refresh = await fetch(`${server.baseUrl}/i/platform/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token, client_id }),
    })
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' })
    expect((await cli(['whoami'])).code).toBe(3)
  })
})

describe('help and completion', () => {
  it('gives every command --help with an example', () => {
    const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)]
    const program = buildProgram('0')
    addServerCommands(
      program,
      new URL('file:///worker.ts'),
      () => {},
      () => {},
    )
    const client = all(program).filter((c) => c !== program)
    const without = client.filter((c) => {
      let help = ''
      c.configureOutput({
        writeOut: (text) => {
          help += text
        },
      })
      c.outputHelp()
      return !/\nExamples:\n {2}\$ .*gatehouse /.test(help)
    })
    expect(without.map((c) => c.name())).toEqual([])
  })

  it('prints a bash script that completes the commands and their subcommands', async () => {
    const script = await cli(['completion', 'bash'])
    expect(script.code).toBe(0)
    const complete = (words: string[]) =>
      Bun.spawnSync(
        [
          'bash',
          '-c',
          `${script.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _gatehouse; echo "\${COMPREPLY[*]}"`,
        ],
        { stdout: 'pipe' },
      )
        .stdout.toString()
        .trim()
    expect(complete(['gatehouse', ''])).toStartWith(
      'login logout whoami workspaces apps keys members tenants webhooks audit',
    )
    expect(complete(['gatehouse', 'workspaces', ''])).toStartWith('list create get rename delete')
    expect(complete(['gatehouse', '-w', 'Acme', 'keys', 'r'])).toBe('rotate revoke')
    expect(complete(['gatehouse', 'apps', 'create', 'x', '--type', ''])).toBe('web spa native')
  })
})
