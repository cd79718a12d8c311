import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { TOOLS } from '../src/cli/mcp/catalog'
import { allows } from '../src/cli/mcp/tools'
import { AppModel } from '../src/features/apps/model'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { UserModel } from '../src/features/users/model'
import { PLATFORM, signUp } from '../src/identity'
import { runCli } from './support/cli'
import { activeWorkspace } from './support/instances'
import { callTool, connectMcp, type McpSession, textOf, writeKeyFile } from './support/mcp'
import { freePort, startTestServer, type TestServer } from './support/server'
import type { Json } from './support/users'

// Issue 58, item 2: `gatehouse mcp` spawned by the SDK's own stdio client with key files made
// through the API by the workspace's owner: the tools a key lists are those its scopes allow,
// calls answer the control plane's data (its refusals as isError results), mutations are audited
// as `key:<id>`, a revoked or missing key fails the connect naming the file, and a token is
// exchanged again before it expires (its lifetime shortened through GATEHOUSE_MCP_REFRESH_BEFORE_MS).

let server: TestServer
let owner: { cookie: string; csrf: string }
let ws: string

beforeAll(async () => {
  server = await startTestServer()
  const account = await signUp(server.core, PLATFORM, {
    email: `owner-${crypto.randomUUID()}@example.com`,
    password: 'a long password 1',
  })
  const session = await createSession(server.core, account.id, null)
  owner = { cookie: `${sessionCookieName(server.core)}=${session.cookie}`, csrf: session.csrfToken }
  ws = await activeWorkspace(server.core, account.id)
})
afterAll(async () => {
  await server.stop()
})

/** A control-plane call as the owner (dashboard session). */
async function asOwner(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      cookie: owner.cookie,
      'x-csrf-token': owner.csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

/** A key made by the owner through the API, its key file written: its id and the file's path. */
async function keyWith(scopes: string[]): Promise<{ id: string; path: string }> {
  const res = await asOwner('POST', `/v1/workspaces/${ws}/machine-keys`, { name: 'agent', scopes })
  expect(res.status).toBe(201)
  return { id: res.body.id, path: writeKeyFile(res.body.key) }
}

/** Exchanges the key made so far: one single-use assertion row each. */
async function exchangesOf(keyId: string): Promise<number> {
  const rows = await server.core.store.query<{ n: number | string }>(
    'SELECT count(*) AS n FROM machine_key_assertions WHERE key_id = $1',
    [keyId],
  )
  return Number(rows[0]!.n)
}

const sessions: McpSession[] = []
afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close()))
})
async function connect(path: string, env: Record<string, string> = {}) {
  const session = await connectMcp(path, env)
  sessions.push(session)
  return session
}

const namesOf = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort()

const READ_TOOLS = [
  'get_app',
  'get_branding',
  'get_login_policy',
  'get_tenant',
  'get_workspace',
  'list_apps',
  'list_idps',
  'list_machine_keys',
  'list_members',
  'list_tenant_members',
  'list_tenants',
  'list_users',
]

describe('gatehouse mcp with a workspace:read key', () => {
  it('lists only read tools, with input schemas from the API models, and answers list_apps with the apps', async () => {
    const app = await asOwner('POST', `/v1/workspaces/${ws}/apps`, {
      name: 'Billing portal',
      redirect_uris: ['https://billing.example.com/cb'],
    })
    expect(app.status).toBe(201)
    const key = await keyWith(['workspace:read'])
    const { client } = await connect(key.path)

    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS)
    for (const tool of tools)
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    // The query of GET …/users as its model declares it; workspace_id optional (the key's own).
    const listUsers = tools.find((t) => t.name === 'list_users')!
    expect(listUsers.inputSchema.properties?.q).toEqual(
      JSON.parse(JSON.stringify(UserModel.listQuery.properties.q)),
    )
    expect(listUsers.inputSchema.required).toBeUndefined()

    const listed = await callTool(client, 'list_apps')
    expect(listed.isError).toBeFalsy()
    expect(listed.structuredContent).toEqual({
      items: [
        expect.objectContaining({ id: app.body.id, name: 'Billing portal', client_id: app.body.client_id }),
      ],
      total: 1,
    })
    expect(textOf(listed)).toBe(`1 app\n- Billing portal (${app.body.id})`)
    const workspace = await callTool(client, 'get_workspace')
    expect(workspace.structuredContent).toMatchObject({ id: ws, name: 'Acme', state: 'active' })
    // One exchange at connect serves the calls of the token's 15 minutes.
    expect(await exchangesOf(key.id)).toBe(1)
  }, 30_000)

  it('refuses another workspace locally, a tool its scopes do not list, and unknown arguments', async () => {
    const key = await keyWith(['workspace:read'])
    const { client } = await connect(key.path)
    const other = '00000000-0000-4000-8000-000000000000'
    const foreign = await callTool(client, 'get_workspace', { workspace_id: other })
    expect(foreign.isError).toBe(true)
    expect(textOf(foreign)).toBe(`this machine key belongs to workspace ${ws}; it cannot act on ${other}`)
    const write = await callTool(client, 'create_app', { name: 'x', redirect_uris: ['https://x.example/cb'] })
    expect(write.isError).toBe(true)
    expect(textOf(write)).toContain('No tool create_app for this machine key')
    const extra = await callTool(client, 'list_apps', { limit: 5 })
    expect(extra).toMatchObject({ isError: true, content: [{ text: 'list_apps takes no argument limit' }] })
    expect(
      (await asOwner('GET', `/v1/workspaces/${ws}/apps`)).body.items.map((a: Json) => a.name),
    ).not.toContain('x')
  }, 30_000)
})

describe('gatehouse mcp with a workspace:write key', () => {
  it('creates an app, audited as key:<id>; an API refusal is an isError result with its detail', async () => {
    const key = await keyWith(['workspace:write'])
    const { client } = await connect(key.path)
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toEqual(
      expect.arrayContaining([...READ_TOOLS, 'create_app', 'delete_app', 'create_webhook']),
    )
    expect(names).not.toContain('update_login_policy')
    expect(names).not.toContain('create_machine_key')
    const createApp = tools.find((t) => t.name === 'create_app')!
    expect(Object.keys(createApp.inputSchema.properties ?? {}).sort()).toEqual(
      ['workspace_id', ...Object.keys(AppModel.create.properties)].sort(),
    )
    expect(createApp.inputSchema.required).toEqual(AppModel.create.required)
    expect(createApp.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
    expect(tools.find((t) => t.name === 'delete_app')!.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    })

    const created = await callTool(client, 'create_app', {
      name: 'Agent app',
      redirect_uris: ['https://agent.example.com/cb'],
      app_type: 'spa',
    })
    expect(created.isError).toBeFalsy()
    expect(created.structuredContent).toMatchObject({
      name: 'Agent app',
      app_type: 'spa',
      client_secret: null,
    })
    const appId = created.structuredContent!.id as string
    expect(textOf(created)).toBe(`app created: Agent app (${appId})`)
    const apps = await asOwner('GET', `/v1/workspaces/${ws}/apps`)
    expect(apps.body.items).toContainEqual(expect.objectContaining({ id: appId, name: 'Agent app' }))
    const audit = await asOwner('GET', `/v1/workspaces/${ws}/audit-log?actor=key:${key.id}`)
    expect(audit.body.items).toEqual([
      expect.objectContaining({
        actor: `key:${key.id}`,
        action: 'app.created',
        target: { type: 'app', id: appId },
      }),
    ])

    const renamed = await callTool(client, 'update_app', {
      app_id: appId,
      name: 'Agent app v2',
      redirect_uris: ['https://agent.example.com/cb2'],
    })
    expect(renamed.isError).toBeFalsy()
    const read = await asOwner('GET', `/v1/workspaces/${ws}/apps/${appId}`)
    expect(read.body).toMatchObject({
      name: 'Agent app v2',
      redirect_uris: ['https://agent.example.com/cb2'],
    })
    const updates = await asOwner(
      'GET',
      `/v1/workspaces/${ws}/audit-log?actor=key:${key.id}&action=app.updated`,
    )
    expect(updates.body.items).toEqual([
      expect.objectContaining({ actor: `key:${key.id}`, action: 'app.updated' }),
    ])

    const refused = await callTool(client, 'create_app', {
      name: 'Bad',
      redirect_uris: ['http://example.com/cb'],
    })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toMatch(/^422: /)
    expect(refused.structuredContent).toMatchObject({ error: { status: 422 } })
  }, 30_000)
})

describe('gatehouse mcp with a workspace:admin key', () => {
  it('lists the admin tools and reads the audit log with its own entries', async () => {
    const key = await keyWith(['workspace:admin'])
    const { client } = await connect(key.path)
    const names = await namesOf(client)
    expect(names).toEqual(
      expect.arrayContaining([
        'update_login_policy',
        'list_audit_log',
        'create_machine_key',
        'revoke_machine_key',
      ]),
    )
    const policy = await callTool(client, 'update_login_policy', { lockout_threshold: 7 })
    expect(policy.structuredContent).toMatchObject({ lockout_threshold: 7 })
    const audit = await callTool(client, 'list_audit_log', { actor: `key:${key.id}` })
    expect(audit.structuredContent).toMatchObject({
      items: [{ actor: `key:${key.id}`, action: 'login_policy.updated' }],
      total: 1,
    })
  }, 30_000)
})

describe('gatehouse mcp with a tenant key', () => {
  it("lists its tenant's tools only and sees its own tenant", async () => {
    for (const slug of ['acme-eu', 'globex'])
      expect((await asOwner('POST', `/v1/workspaces/${ws}/tenants`, { slug, name: slug })).status).toBe(201)
    const reader = await keyWith(['tenant:acme-eu:read'])
    const read = await connect(reader.path)
    expect(await namesOf(read.client)).toEqual(['get_tenant', 'list_tenant_members', 'list_tenants'])
    const tenants = await callTool(read.client, 'list_tenants')
    expect(tenants.structuredContent).toMatchObject({ items: [{ slug: 'acme-eu' }], total: 1 })

    const writer = await keyWith(['tenant:acme-eu:write'])
    const write = await connect(writer.path)
    expect(await namesOf(write.client)).toEqual([
      'get_tenant',
      'invite_tenant_member',
      'list_tenant_members',
      'list_tenants',
      'remove_tenant_member',
      'update_tenant',
    ])
  }, 30_000)
})

describe('gatehouse mcp with a key it cannot use', () => {
  it('fails to connect within seconds when the key was revoked, naming the key file and the reason', async () => {
    const key = await keyWith(['workspace:read'])
    expect((await asOwner('DELETE', `/v1/workspaces/${ws}/machine-keys/${key.id}`)).status).toBe(200)
    const started = performance.now()
    const error = (await connectMcp(key.path).catch((e) => e)) as Error & { stderr: string }
    expect(error).toBeInstanceOf(Error)
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(error.stderr).toContain(
      `gatehouse mcp: machine key ${key.path}: the exchange was refused: This key was revoked`,
    )
  }, 30_000)

  it('fails to connect when the key file is missing, and exits 3 with the file named', async () => {
    const missing = `${writeKeyFile({})}.gone`
    const error = (await connectMcp(missing).catch((e) => e)) as Error & { stderr: string }
    expect(error).toBeInstanceOf(Error)
    expect(error.stderr).toContain(`gatehouse mcp: machine key ${missing}: no such file`)
    const run = await runCli(['mcp'], { SERVICE_MACHINE_KEY_PATH: missing })
    expect(run).toEqual({
      stdout: '',
      stderr: `gatehouse mcp: machine key ${missing}: no such file\n`,
      code: 3,
    })
  }, 30_000)
})

describe('gatehouse mcp as its token nears expiry', () => {
  it('exchanges the key again before the token expires, and the call goes through', async () => {
    const key = await keyWith(['workspace:read'])
    // A 900 s token counted as due 899 s early: it is renewed on the first call a second after connect.
    const { client } = await connect(key.path, { GATEHOUSE_MCP_REFRESH_BEFORE_MS: '899000' })
    expect(await exchangesOf(key.id)).toBe(1)
    await Bun.sleep(1_100)
    const workspace = await callTool(client, 'get_workspace')
    expect(workspace.structuredContent).toMatchObject({ id: ws })
    expect(await exchangesOf(key.id)).toBe(2)
  }, 30_000)
})

describe('gatehouse mcp --http', () => {
  it('serves Streamable HTTP on loopback to the SDK client', async () => {
    const key = await keyWith(['workspace:read'])
    const port = await freePort()
    const proc = Bun.spawn([process.execPath, 'src/main.ts', 'mcp', '--http', '--port', String(port)], {
      cwd: `${import.meta.dir}/..`,
      env: { PATH: process.env.PATH ?? '', SERVICE_MACHINE_KEY_PATH: key.path },
      stderr: 'pipe',
    })
    try {
      const reader = proc.stderr.getReader()
      let seen = ''
      while (!seen.includes('serving Streamable HTTP')) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`gatehouse mcp --http exited: ${seen}`)
        seen += new TextDecoder().decode(value)
      }
      expect(seen).toContain(`serving Streamable HTTP at http://127.0.0.1:${port}/mcp`)
      const client = new Client({ name: 'gatehouse-tests', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)))
      expect(await namesOf(client)).toEqual(READ_TOOLS)
      expect((await callTool(client, 'get_workspace')).structuredContent).toMatchObject({ id: ws })
      await client.close()
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
  }, 30_000)

  it('refuses a host that is not loopback', async () => {
    const key = await keyWith(['workspace:read'])
    const run = await runCli(['mcp', '--http', '--host', '0.0.0.0'], { SERVICE_MACHINE_KEY_PATH: key.path })
    expect(run).toEqual({
      stdout: '',
      stderr: 'gatehouse mcp: --host 0.0.0.0 is not a loopback address; use 127.0.0.1\n',
      code: 2,
    })
  })
})

describe('docs/mcp.md', () => {
  const section = readFileSync(join(import.meta.dir, '../docs/mcp.md'), 'utf8')
  /** The tool names a row of the scope table lists. */
  const row = (scope: string) => {
    const line = section.split('\n').find((l) => l.startsWith(`| \`${scope}\` |`))!
    return [...line.split('|')[2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).sort()
  }
  const toolsOf = (scopes: string[]) =>
    TOOLS.filter((t) => allows(scopes, t.needs))
      .map((t) => t.name)
      .sort()
  const minus = (a: string[], b: string[]) => a.filter((x) => !b.includes(x))

  it('lists what each scope lets an agent do, as the server filters its tools', () => {
    expect(row('workspace:read')).toEqual(READ_TOOLS)
    expect(toolsOf(['workspace:read'])).toEqual(READ_TOOLS)
    expect(row('workspace:admin')).toEqual(minus(toolsOf(['workspace:admin']), toolsOf(['workspace:write'])))
    expect(minus(row('workspace:write'), READ_TOOLS)).toEqual(
      expect.arrayContaining([
        'create_app',
        'delete_app',
        'create_webhook',
        'list_webhooks',
        'update_workspace',
      ]),
    )
    expect(minus(row('workspace:write'), toolsOf(['workspace:write']))).toEqual([])
    expect(row('tenant:<slug>:read')).toEqual(toolsOf(['tenant:acme:read']))
    expect(row('tenant:<slug>:write')).toEqual(
      minus(toolsOf(['tenant:acme:write']), toolsOf(['tenant:acme:read'])),
    )
  })
})
