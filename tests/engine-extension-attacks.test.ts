import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect } from 'node:net'
import { eq } from 'drizzle-orm'
import { interactionPolicy } from 'oidc-provider'
import * as oidc from 'openid-client'
import { workspaces } from '../src/features/workspaces/schema'
import {
  type Extending,
  type GrantType,
  type IdentityExtension,
  type InteractionStep,
  instanceEndpoints,
  issuerFor,
  PLATFORM,
  platformClient,
  signUp,
} from '../src/identity'
import { LOGO_PATH } from '../src/identity/branding'
import { HTMX_PATH } from '../src/identity/pages/assets'
import { ManualClock } from '../src/shared/clock'
import { AppError } from '../src/shared/errors'
import { FAVICON_PATH } from '../src/shared/views/hosted-layout'
import { Agent } from './support/browserless'
import { activeWorkspace, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 59: an attacker's pass over the identity engine's extension points. A throwaway feature
// ("probe") lends the engine an endpoint, a grant type, a claim and a step, composed into a real
// server in-process (ServerOptions.identity); each attack goes through HTTP. What the engine must
// refuse of a feature (a grant, scope, claim, step or endpoint that would stand in for its own) is
// refused at start, before anything is served.

const REDIRECT_URI = 'https://rp.example.com/cb'
const PROBE_GRANT = 'urn:example:params:oauth:grant-type:probe'
/** Accounts whose sign-in the step's check fails for; whose claim fails; whose signed-in hook fails. */
const checkFailsFor = new Set<string>()
const claimFailsFor = new Set<string>()
const hookFailsFor = new Set<string>()

const probeEndpoints = instanceEndpoints('probe-endpoints')
  // A turn of the event loop between reading the instance and answering: requests interleave.
  .get('/probe', async ({ instance }) => {
    const before = instance.id
    await new Promise((r) => setTimeout(r, Math.random() * 5))
    return { id: before, after: instance.id, issuer: instance.issuer }
  })
  .post('/probe/echo', async ({ request }) => ({ length: (await request.arrayBuffer()).byteLength }))
  .get('/probe/boom', () => {
    throw new Error('probe internals: /srv/secret.ts:12')
  })
  .get('/probe/refused', () => {
    throw new AppError('PROBE_REFUSED', 409, 'The probe refuses this')
  })
  .get('/probe/page', () => new Response('<p>probe</p>', { headers: { 'content-type': 'text/html' } }))

const probeGrant: GrantType = {
  type: PROBE_GRANT,
  parameters: ['mode'],
  handle: async ({ params, issueAccessToken }) => {
    if (params.mode === 'boom') throw new Error('probe internals: /srv/grant.ts:7')
    if (params.mode === 'refuse') throw new AppError('PROBE_REFUSED', 400, 'The probe refuses this')
    return issueAccessToken()
  },
}

const probeStep: InteractionStep = {
  name: 'probe-terms',
  order: 10,
  check: ({ accountId, scopes }) => {
    if (checkFailsFor.has(accountId)) throw new Error('probe internals: /srv/step.ts:3')
    return scopes.includes('probe')
  },
  // Only an explicit acceptance answers the step.
  page: async (req) =>
    req.method === 'POST' && req.form.get('accept') === 'yes'
      ? { done: true }
      : {
          html: `<h1>Probe terms</h1><form method="post" action="${Bun.escapeHTML(req.action)}"><input name="accept" value="no"><button>OK</button></form>`,
        },
}

/** Accounts asked a second step, named as an Object.prototype property is. */
const askedConstructor = new Set<string>()
const constructorStep: InteractionStep = {
  name: 'constructor',
  order: 20,
  check: ({ accountId }) => askedConstructor.has(accountId),
  page: async (req) => (req.method === 'POST' ? { done: true } : { html: '<h1>Constructor step</h1>' }),
}

const probe = (identity: IdentityExtension): Extending => ({ name: 'probe', identity: () => identity })

let server: TestServer
let issuerA: string
let issuerB: string
let wsA: string

beforeAll(async () => {
  // The data plane's limit on, high enough for every test but those of a workspace's own low rate;
  // the test client is a trusted proxy, so `X-Forwarded-For` names each request's client. The
  // server's clock stands still: no bucket refills while a burst is sent.
  const limits = {
    RATE_LIMIT_DATA_PLANE_RPS: '1000',
    RATE_LIMIT_DATA_PLANE_BURST: '4000',
    TRUSTED_PROXIES: '127.0.0.1/32',
  }
  server = await startTestServer(limits, undefined, {
    clock: new ManualClock(Date.now()),
    identity: [
      probe({
        endpoints: [probeEndpoints],
        grants: [probeGrant],
        claims: [
          {
            scope: 'probe',
            claims: ['probe_note'],
            read: async (_ws, accountId) => {
              if (claimFailsFor.has(accountId)) throw new Error('probe internals: /srv/claim.ts:5')
              return { probe_note: 'hi' }
            },
          },
        ],
        signedIn: [
          async (_ws, account) => {
            if (hookFailsFor.has(account.id)) throw new Error('probe internals: /srv/hook.ts:9')
          },
        ],
        steps: [probeStep, constructorStep],
      }),
    ],
  })
  wsA = await activeWorkspace(server.core)
  issuerA = issuerFor(server.core.config, wsA)
  issuerB = issuerFor(server.core.config, await activeWorkspace(server.core))
})
afterAll(() => server.stop())

/** Sends raw bytes on a fresh connection (paths and framing no fetch client would send); the whole answer. */
function raw(request: string): Promise<string> {
  const { port } = new URL(server.baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1')
    let answer = ''
    socket.on('data', (d) => {
      answer += d.toString()
    })
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
    socket.setTimeout(5000, () => socket.end())
    socket.write(request)
  })
}

describe('an instance endpoint', () => {
  it('answers only under a workspace instance that serves', async () => {
    const ok = await fetch(`${issuerA}/probe`)
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ id: wsA, after: wsA, issuer: issuerA })
    // The platform's instance is never extended.
    expect((await fetch(`${issuerFor(server.core.config, PLATFORM)}/probe`)).status).toBe(404)
    const unknown = issuerFor(server.core.config, '7f1c6e2a-0000-4000-8000-000000000000')
    expect((await fetch(`${unknown}/probe`)).status).toBe(404)
    const gone = await activeWorkspace(server.core)
    expect((await fetch(`${issuerFor(server.core.config, gone)}/probe`)).status).toBe(200)
    await server.core.db.update(workspaces).set({ state: 'deleting' }).where(eq(workspaces.id, gone))
    await server.core.instances.changed(gone)
    expect((await fetch(`${issuerFor(server.core.config, gone)}/probe`)).status).toBe(404)
  })

  it('sees only the instance it was addressed to, under interleaved requests', async () => {
    const issuers = Array.from({ length: 200 }, (_, i) => (i % 2 ? issuerA : issuerB))
    const answers = await Promise.all(
      issuers.map(async (issuer) => (await fetch(`${issuer}/probe`)).json() as Promise<{ issuer: string }>),
    )
    expect(answers.map((a) => a.issuer)).toEqual(issuers)
  })

  it('is reached by its own path only', async () => {
    const b = new URL(issuerB).pathname
    const a = new URL(issuerA).pathname
    // A path that climbs out of A into B is B's, whatever the client wrote.
    const climbed = await raw(`GET ${a}/../..${b}/probe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    expect(climbed.split('\r\n')[0]).toContain('404')
    const slashes = await raw(`GET ${a}//evil.example/probe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    expect(slashes.split('\r\n')[0]).toContain('404')
    expect((await fetch(`${issuerA}/probe/`)).status).toBe(404)
    expect((await fetch(`${issuerA}/probe%2Fecho`, { method: 'POST' })).status).toBe(404)
    // HEAD of a GET route: its headers, no body.
    const head = await fetch(`${issuerA}/probe`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
    // OPTIONS is no method of the endpoint: the provider's answer, not the probe's.
    const options = await fetch(`${issuerA}/probe`, { method: 'OPTIONS' })
    expect(await options.text()).not.toContain(issuerA)
    // No method override: a GET that says it is a POST is a GET.
    const overridden = await fetch(`${issuerA}/probe/echo`, {
      headers: { 'x-http-method-override': 'POST', 'x-method-override': 'POST' },
    })
    expect(overridden.status).toBe(404)
  })

  it("is read within the plane's body limit: 64 KiB, with or without a length", async () => {
    expect(
      await (await fetch(`${issuerA}/probe/echo`, { method: 'POST', body: 'x'.repeat(1000) })).json(),
    ).toEqual({ length: 1000 })
    const big = await fetch(`${issuerA}/probe/echo`, { method: 'POST', body: 'x'.repeat(64 * 1024 + 1) })
    expect(big.status).toBe(413)
    const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`
    const chunked = await raw(
      `POST ${new URL(issuerA).pathname}/probe/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunk('x'.repeat(40 * 1024))}${chunk('x'.repeat(40 * 1024))}0\r\n\r\n`,
    )
    expect(chunked.split('\r\n')[0]).toContain('413')
  })

  it('answers a failure without its internals, with the plane headers', async () => {
    const boom = await fetch(`${issuerA}/probe/boom`, { headers: { accept: 'application/json' } })
    expect(boom.status).toBe(500)
    const text = await boom.text()
    expect(text).not.toContain('probe internals')
    expect(text).not.toContain('secret.ts')
    const refused = await fetch(`${issuerA}/probe/refused`)
    expect(refused.status).toBe(409)
    expect(await refused.json()).toEqual({ detail: 'The probe refuses this' })
    for (const res of [boom, refused, await fetch(`${issuerA}/probe/page`)]) {
      expect(res.headers.get('x-request-id')).toBeTruthy()
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    }
  })

  it('is counted by the data-plane limit like any request of its instance', async () => {
    const slow = await activeWorkspace(server.core)
    // Its own rate, as the instance reads it (a burst of 4 at this server's ratio).
    await server.core.store.query('UPDATE instance_secrets SET data_plane_rps = 1 WHERE instance_id = $1', [
      slow,
    ])
    await server.core.instances.changed(slow)
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => fetch(`${issuerFor(server.core.config, slow)}/probe`)),
    )
    const limited = answers.filter((r) => r.status === 429)
    expect(limited.length).toBeGreaterThan(0)
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await limited[0]!.json()).error).toBe('temporarily_unavailable')
    expect(limited[0]!.headers.get('x-request-id')).toBeTruthy()
  })

  // DESIGN "Data plane fairness": a browser's pages keep a share of the burst that a flood of
  // JSON calls cannot take. An endpoint is the control plane's stack, JSON: it was counted as a
  // page, so a flood of it took that share too and the sign-in pages answered 429.
  it("cannot take the share of the burst kept for a browser's pages", async () => {
    const ws = await activeWorkspace(server.core)
    // 50/s: a burst of 200 at this server's ratio, 50 of it kept for pages, 50 per client address.
    await server.core.store.query('UPDATE instance_secrets SET data_plane_rps = 50 WHERE instance_id = $1', [
      ws,
    ])
    const issuer = issuerFor(server.core.config, ws)
    const flood = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        fetch(`${issuer}/probe`, { headers: { 'x-forwarded-for': `198.51.100.${(i % 10) + 1}` } }),
      ),
    )
    expect(flood.filter((r) => r.status === 200)).toHaveLength(150)
    expect((await fetch(`${issuer}/`, { headers: { 'x-forwarded-for': '203.0.113.7' } })).status).toBe(200)
  })
})

/** A confidential and a public app of workspace A, and a token request to A's token endpoint. */
async function apps() {
  const web = await registerApp(server.core, wsA, { type: 'web', redirectUris: [REDIRECT_URI] })
  const spa = await registerApp(server.core, wsA, { type: 'spa', redirectUris: [REDIRECT_URI] })
  const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${issuerA}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(body).toString(),
    })
  const basic = { authorization: `Basic ${btoa(`${web.clientId}:${web.clientSecret}`)}` }
  return { web, spa, token, basic }
}

describe("a feature's grant type", () => {
  it('is answered for a confidential client only, its failures without internals', async () => {
    const { spa, token, basic } = await apps()
    const granted = await token({ grant_type: PROBE_GRANT }, basic)
    expect(granted.status).toBe(200)
    expect((await granted.json()).access_token).toBeTruthy()
    const refused = await token({ grant_type: PROBE_GRANT, mode: 'refuse' }, basic)
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The probe refuses this',
    })
    const boom = await token({ grant_type: PROBE_GRANT, mode: 'boom' }, basic)
    expect(boom.status).toBe(500)
    const text = await boom.text()
    expect(text).not.toContain('probe internals')
    expect(JSON.parse(text).error).toBe('server_error')
    // A public client is not allowed it.
    const publicClient = await token({ grant_type: PROBE_GRANT, client_id: spa.clientId })
    expect(publicClient.status).toBe(400)
    expect((await publicClient.json()).error_description).toBe(
      'requested grant type is not allowed for this client',
    )
  })

  it("is not the platform instance's, even for its confidential console client", async () => {
    const platform = platformClient(server.core)
    const answer = await fetch(`${platform.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${platform.clientId}:${platform.clientSecret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: PROBE_GRANT }).toString(),
    })
    expect(answer.status).toBe(400)
    expect(await answer.json()).toEqual({
      error: 'invalid_request',
      error_description: 'requested grant type is not allowed for this client',
    })
  })
})

/** An account of workspace A, and a browser at the step's page after its sign-in asked for `scope`. */
async function atStep(email: string, scope = 'openid probe') {
  const { web, token, basic } = await apps()
  const account = await signUp(server.core, wsA, { email, password: 'correct horse battery' })
  const verifier = oidc.randomPKCECodeVerifier()
  const authorize = new URL(`${issuerA}/auth`)
  authorize.search = new URLSearchParams({
    client_id: web.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()
  const agent = new Agent(server.baseUrl)
  const form = await agent.follow(authorize)
  const login = (fields = { email, password: 'correct horse battery' }) =>
    agent.submit(formHtml, form.url, '/login', fields, atRp)
  const formHtml = await form.res.text()
  const exchange = (done: { url: URL }) =>
    token(
      {
        grant_type: 'authorization_code',
        code: done.url.searchParams.get('code')!,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      },
      basic,
    )
  const code = async (done: { url: URL }) => {
    const exchanged = await exchange(done)
    return JSON.parse(Buffer.from((await exchanged.json()).id_token.split('.')[1], 'base64url').toString())
  }
  return { agent, account, authorize, login, formHtml, code, exchange }
}
const atRp = (u: URL) => u.href.startsWith(REDIRECT_URI)

describe("a feature's interaction step", () => {
  it('cannot be skipped through another action of its interaction', async () => {
    const { agent, login, code } = await atStep('skip@example.com')
    const step = await login()
    const page = await step.res.text()
    expect(page).toContain('<h1>Probe terms</h1>')
    const interaction = step.url.pathname.match(/\/interaction\/[^/]+/)![0]
    const prefix = step.url.pathname.slice(0, step.url.pathname.indexOf('/interaction/'))
    for (const action of [
      'login',
      'mfa',
      'verify',
      'signup',
      'passkey',
      'broker',
      'link',
      'forgot',
      'step',
    ]) {
      const tried = await agent.follow(
        `${prefix}${interaction}/${action}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            email: 'skip@example.com',
            password: 'correct horse battery',
          }).toString(),
        },
        atRp,
      )
      expect(atRp(tried.url)).toBe(false)
    }
    const accepted = await agent.submit(page, step.url, '/step', { accept: 'yes' }, atRp)
    expect(atRp(accepted.url)).toBe(true)
    expect((await code(accepted)).probe_note).toBe('hi')
  })

  it('ends without a code when cancelled', async () => {
    const { agent, login } = await atStep('cancel@example.com')
    const step = await login()
    expect(step.url.pathname).toMatch(/\/interaction\/[\w-]+$/)
    const cancelled = await agent.follow(`${step.url.href}/abort`, {}, atRp)
    expect(atRp(cancelled.url)).toBe(true)
    expect(cancelled.url.searchParams.get('code')).toBeNull()
    expect(cancelled.url.searchParams.get('error')).toBe('access_denied')
  })

  it('is asked again of a signed-in session, and refused without a page (prompt=none)', async () => {
    const { agent, login, authorize } = await atStep('again@example.com')
    const step = await login()
    const page = await step.res.text()
    expect(step.res.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(atRp((await agent.submit(page, step.url, '/step', { accept: 'yes' }, atRp)).url)).toBe(true)
    // The session is signed in: the next authorization still stops at the step, not at the app.
    const again = await agent.follow(authorize, {}, atRp)
    expect(atRp(again.url)).toBe(false)
    expect(await again.res.text()).toContain('<h1>Probe terms</h1>')
    const silent = new URL(authorize)
    silent.searchParams.set('prompt', 'none')
    const refused = await agent.follow(silent, {}, atRp)
    expect(atRp(refused.url)).toBe(true)
    expect(refused.url.searchParams.get('code')).toBeNull()
    expect(refused.url.searchParams.get('error')).toBe('interaction_required')
  })

  // Before, a step was taken as answered when the interaction's result had its name: a result is a
  // plain object, so a step named `constructor` (or `toString`…) was never asked.
  it('is asked whatever its name, an inherited property of an object included', async () => {
    const { account, login } = await atStep('constructor@example.com', 'openid')
    askedConstructor.add(account.id)
    const step = await login()
    expect(atRp(step.url)).toBe(false)
    expect(await step.res.text()).toContain('<h1>Constructor step</h1>')
  })

  it('whose check fails answers a page without its internals', async () => {
    const { account, login } = await atStep('failing@example.com', 'openid')
    checkFailsFor.add(account.id)
    const failed = await login()
    expect(atRp(failed.url)).toBe(false)
    expect(failed.res.status).toBe(500)
    expect(await failed.res.text()).not.toContain('probe internals')
  })
})

describe("a feature's signed-in hook or claim", () => {
  it('that fails stops the sign-in without its internals', async () => {
    const hooked = await atStep('hooked@example.com', 'openid')
    hookFailsFor.add(hooked.account.id)
    const stopped = await hooked.login()
    expect(atRp(stopped.url)).toBe(false)
    // A failure of ours: the one error mapping's 500, said in general terms (the detail is logged).
    expect(stopped.res.status).toBe(500)
    const page = await stopped.res.text()
    expect(page).toContain('Something went wrong. Try again.')
    expect(page).not.toContain('probe internals')
    const claimed = await atStep('claimed@example.com')
    claimFailsFor.add(claimed.account.id)
    const step = await claimed.login()
    const back = await claimed.agent.submit(await step.res.text(), step.url, '/step', { accept: 'yes' }, atRp)
    const exchanged = await claimed.exchange(back)
    expect(exchanged.status).toBe(500)
    const text = await exchanged.text()
    expect(text).not.toContain('probe internals')
    expect(JSON.parse(text).error).toBe('server_error')
  })
})

/** Whether a server lending the engine `identity` starts: the error that stops it, or null. */
async function startError(identity: IdentityExtension): Promise<string | null> {
  try {
    const started = await startTestServer({}, undefined, { identity: [probe(identity)] })
    await started.stop()
    return null
  } catch (e) {
    return (e as Error).message
  }
}

describe('what would stand in for the engine', () => {
  it('is refused at start: a grant type oidc-provider or the platform owns', async () => {
    for (const type of [
      'authorization_code',
      'client_credentials',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
    ])
      expect(await startError({ grants: [{ ...probeGrant, type }] })).toBe(
        `the probe feature's grant type "${type}" is the identity engine's own`,
      )
  })

  // Before, a claim scope named `openid` replaced the engine's (`amr` left the ID token), and a
  // claim named like a token's own (`nonce`, `sid`, `azp`) went into the ID token, or (`iss`,
  // `aud`, `amr`, `acr`, `exp`) into userinfo, with the feature's value.
  it('is refused at start: a scope or claim the engine releases or a token carries', async () => {
    const claim = (scope: string, claims: string[]) => ({
      claims: [{ scope, claims, read: async () => ({}) }],
    })
    for (const scope of ['openid', 'email', 'profile', 'offline_access'])
      expect(await startError(claim(scope, ['probe_note']))).toBe(
        `the probe feature's claim scope "${scope}" is the identity engine's own`,
      )
    for (const name of [
      'sub',
      'email',
      'email_verified',
      'name',
      'iss',
      'aud',
      'amr',
      'acr',
      'nonce',
      'sid',
      'exp',
    ])
      expect(await startError(claim('probe', ['probe_note', name]))).toBe(
        `the probe feature's claim "${name}" is the identity engine's own`,
      )
  })

  // Before, a second scope releasing the tenants feature's `tenants` claim (what apps authorize
  // by) replaced its value whenever both scopes were granted: the later feature's answer won.
  it("is refused at start: a claim another feature's scope releases", async () => {
    const tenants = { claims: [{ scope: 'probe', claims: ['tenants'], read: async () => ({ tenants: [] }) }] }
    expect(await startError(tenants)).toBe('two features extend the identity engine with the claim "tenants"')
  })

  // Before, a step named `login` stopped every sign-in ("Sign-in interrupted"), and one named
  // `consent` was never shown: the engine answers its consent prompt itself.
  it("is refused at start: a step named as one of the engine's prompts", async () => {
    const prompts = interactionPolicy.base().map((p) => p.name)
    expect(prompts).toEqual(['login', 'consent'])
    for (const name of prompts)
      expect(await startError({ steps: [{ ...probeStep, name }] })).toBe(
        `the probe feature's interaction step "${name}" is the identity engine's own`,
      )
  })

  // Before, a feature's `POST /token` answered every instance's token requests in place of the
  // provider, and a route of a parameter or a wildcard first (`/:id`, `/*`) shadowed them all.
  it("is refused at start: an endpoint at one of the engine's paths", async () => {
    const endpoint = (method: 'get' | 'post', path: string) => ({
      endpoints: [instanceEndpoints('probe-shadow')[method](path, () => ({}))],
    })
    for (const [method, path] of [
      ['post', '/token'],
      ['get', '/jwks'],
      ['get', '/.well-known/openid-configuration'],
      ['get', '/auth'],
      ['get', '/me'],
      ['post', '/interaction/:uid/probe'],
      ['get', '/'],
      ['get', '/:id'],
      ['get', '/*'],
    ] as const)
      expect(await startError(endpoint(method, path))).toBe(
        `the probe feature's endpoint "${method.toUpperCase()} ${path}" is the identity engine's own`,
      )
    // Every endpoint the provider lists in discovery, and the assets the hosted pages link.
    const discovery = (await (await fetch(`${issuerA}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >
    const listed = Object.entries(discovery)
      .filter(
        ([key, value]) => (key.endsWith('_endpoint') || key === 'jwks_uri') && typeof value === 'string',
      )
      .map(([, url]) => (url as string).slice(issuerA.length))
    expect(listed).toContain('/token')
    for (const path of [...listed, FAVICON_PATH, LOGO_PATH, HTMX_PATH])
      expect(await startError(endpoint('get', path))).toBe(
        `the probe feature's endpoint "GET ${path}" is the identity engine's own`,
      )
  })
})
