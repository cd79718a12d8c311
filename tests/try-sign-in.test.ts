import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { count } from 'drizzle-orm'
import { Secret, TOTP } from 'otpauth'
import { trySignIns } from '../src/features/try-sign-in/schema'
import { tryVerifierContext } from '../src/features/try-sign-in/service'
import { workspaceMembers } from '../src/features/workspaces/schema'
import { findAccountByEmail } from '../src/identity'
import { startTotpEnrolment, useTotpCode } from '../src/identity/mfa/totp'
import { pkceS256 } from '../src/shared/crypto'
import { Agent } from './support/browserless'
import { activeWorkspace, registerApp } from './support/instances'
import { setPolicy } from './support/policy'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpEndUser, signUpUser } from './support/users'

// Issue 57 item 4: "Try sign-in" runs a real sign-in at a workspace's hosted pages through the
// dashboard's own client of its instance (gatehouse-try-<workspace id>) and shows the ID token's
// claims, userinfo and amr. Through HTTP, as a browser without script: the button's POST, the
// instance's pages, the callback's page.

let server: TestServer
let owner: PlatformUser
let ws: string
let other: string
const endUser = { email: 'grace@example.com', password: 'cobol-compiler-1959', name: 'Grace Hopper' }

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, { email: 'ada@example.com', password: 'analytical-engine', name: 'Ada' })
  ws = await activeWorkspace(server.core, owner.id)
  other = await activeWorkspace(server.core, owner.id)
})
afterAll(() => server?.stop())

const tryClientId = (workspaceId: string) => `gatehouse-try-${workspaceId}`
const callbackPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/try/callback`
const atCallback = (u: URL) => u.pathname === callbackPath(ws)

/** The button's request (htmx): the authorization request it sends the browser to. */
async function startTry(user: PlatformUser, workspaceId = ws): Promise<URL> {
  const res = await user.agent.request(`/app/workspaces/${workspaceId}/try`, {
    method: 'POST',
    headers: { 'hx-request': 'true', 'x-csrf-token': user.csrf },
  })
  expect(res.status).toBe(200)
  return new URL(res.headers.get('hx-redirect')!)
}

/** A `<pre id=…>` of the result page, unescaped and parsed. */
function shownJson(html: string, id: string): Record<string, unknown> {
  const text = new RegExp(`<pre[^>]*id="${id}"[^>]*>([\\s\\S]*?)</pre>`).exec(html)?.[1]
  if (text === undefined) throw new Error(`no #${id} on:\n${html.slice(0, 800)}`)
  const unescaped = text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
  return JSON.parse(unescaped)
}

/** Signs the end user in at the hosted sign-in form `page` shows; where the instance sent the browser. */
async function signInThere(agent: Agent, page: { res: Response; url: URL }, totp?: () => string) {
  const html = await page.res.text()
  expect(html).toContain('<h1>Sign in</h1>')
  let back = await agent.submit(
    html,
    page.url,
    '/login',
    { email: endUser.email, password: endUser.password },
    atCallback,
  )
  if (totp) {
    const challenge = await back.res.text()
    expect(challenge).toContain('<h1>Two-step verification</h1>')
    back = await agent.submit(challenge, back.url, '/mfa', { code: totp() }, atCallback)
  }
  expect(atCallback(back.url)).toBe(true)
  return back.url
}

describe('Try sign-in', () => {
  it('signs a new end user up at the hosted pages and shows the claims, userinfo and amr, never stored', async () => {
    const authorize = await startTry(owner)
    expect(authorize.origin + authorize.pathname).toBe(`${server.baseUrl}/i/${ws}/auth`)
    expect(authorize.searchParams.get('client_id')).toBe(tryClientId(ws))
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorize.searchParams.get('prompt')).toBe('login')

    const back = await signUpEndUser(owner.agent, authorize, endUser, `${server.baseUrl}${callbackPath(ws)}`)
    const res = await owner.agent.request(back)
    const html = await res.text()
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')

    const account = await findAccountByEmail(server.core, ws, endUser.email)
    const claims = shownJson(html, 'try-claims-json')
    expect(claims).toMatchObject({
      sub: account!.id,
      email: endUser.email,
      name: endUser.name,
      iss: `${server.baseUrl}/i/${ws}`,
      aud: tryClientId(ws),
      amr: ['pwd'],
    })
    expect(shownJson(html, 'try-userinfo-json')).toMatchObject({ sub: account!.id, email: endUser.email })
    expect(html).toContain('<code>pwd</code>: <span>password</span>')
    expect(html).toContain('No second factor was used')
    // Single use: the same callback again finds nothing.
    expect((await owner.agent.request(back)).status).toBe(400)
    expect((await server.core.db.select({ n: count() }).from(trySignIns))[0]!.n).toBe(0)
    // No token reaches the log (a JWT starts with the base64url of `{"`).
    expect(JSON.stringify(server.logLines)).not.toContain('eyJ')
  })

  it('asks for credentials again where the browser still has a session at the instance (prompt=login)', async () => {
    const page = await owner.agent.follow(await startTry(owner), {}, atCallback)
    expect(page.url.pathname).toStartWith(`/i/${ws}/`)
    const back = await signInThere(owner.agent, page)
    const html = await (await owner.agent.request(back)).text()
    expect(shownJson(html, 'try-claims-json').amr).toEqual(['pwd'])
  })

  it('does not list the try client among the apps of the workspace', async () => {
    const app = await registerApp(server.core, ws, {
      type: 'spa',
      redirectUris: ['https://rp.example.com/cb'],
    })
    const listed = await json(owner.agent, 'GET', `/v1/workspaces/${ws}/apps`)
    expect(listed.status).toBe(200)
    expect(listed.body.total).toBe(1)
    expect(listed.body.items.map((a: { client_id: string }) => a.client_id)).toEqual([app.clientId])
  })

  it("is refused by another workspace's instance: an error, not a sign-in page", async () => {
    const request = (instance: string) => {
      const url = new URL(`${server.baseUrl}/i/${instance}/auth`)
      url.search = new URLSearchParams({
        client_id: tryClientId(ws),
        response_type: 'code',
        scope: 'openid',
        redirect_uri: `${server.baseUrl}${callbackPath(ws)}`,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString()
      return new Agent(server.baseUrl).follow(url)
    }
    const own = await request(ws)
    expect(own.url.pathname).toStartWith(`/i/${ws}/interaction/`)
    expect(await own.res.text()).toContain('<h1>Sign in</h1>')
    const elsewhere = await request(other)
    expect(elsewhere.res.status).toBe(400)
    const html = await elsewhere.res.text()
    expect(html).toContain('client is invalid')
    expect(html).not.toContain('<h1>Sign in</h1>')
  })

  it("refuses a forged state, and a state of another dashboard session's try", async () => {
    const forged = await owner.agent.request(`${callbackPath(ws)}?code=made-up&state=made-up`)
    expect(forged.status).toBe(400)
    expect(await forged.text()).toContain('This sign-in attempt expired, was already used')

    const viewer = await signUpUser(server, {
      email: 'joan@example.com',
      password: 'hut-eight-bombe',
      name: '',
    })
    const now = server.core.clock.now()
    await server.core.db
      .insert(workspaceMembers)
      .values({ workspaceId: ws, accountId: viewer.id, role: 'viewer', createdAt: now, updatedAt: now })
    // The owner's try, its state carried to the viewer's session: no row there; the owner's is left.
    const state = (await startTry(owner)).searchParams.get('state')!
    const carried = await viewer.agent.request(`${callbackPath(ws)}?code=made-up&state=${state}`)
    expect(carried.status).toBe(400)
    // Nor at another workspace's callback in the owner's own session.
    const astray = await owner.agent.request(`${callbackPath(other)}?code=made-up&state=${state}`)
    expect(astray.status).toBe(400)
    expect((await server.core.db.select({ n: count() }).from(trySignIns))[0]!.n).toBe(1)
    // A viewer may run it (workspace:read): it changes nothing a viewer could not do at any app.
    expect((await startTry(viewer)).searchParams.get('client_id')).toBe(tryClientId(ws))
  })

  it('refuses a non-member (404, as any workspace the caller cannot see), and one signed out', async () => {
    const stranger = await signUpUser(server, {
      email: 'alan@example.com',
      password: 'turing-machine',
      name: '',
    })
    const before = (await server.core.db.select({ n: count() }).from(trySignIns))[0]!.n
    const res = await stranger.agent.request(`/app/workspaces/${ws}/try`, {
      method: 'POST',
      headers: { 'hx-request': 'true', 'x-csrf-token': stranger.csrf },
    })
    expect(res.status).toBe(404)
    expect(res.headers.get('hx-redirect')).toBeNull()
    const noCsrf = await owner.agent.request(`/app/workspaces/${ws}/try`, { method: 'POST' })
    expect(noCsrf.status).toBe(403)
    const signedOut = await fetch(`${server.baseUrl}/app/workspaces/${ws}/try`, {
      method: 'POST',
      redirect: 'manual',
    })
    expect(signedOut.status).toBe(303)
    expect(signedOut.headers.get('location')).toStartWith('/v1/auth/login')
    expect((await server.core.db.select({ n: count() }).from(trySignIns))[0]!.n).toBe(before)
  })

  it('shows the second factor in amr when the login policy requires MFA', async () => {
    const account = await findAccountByEmail(server.core, ws, endUser.email)
    const enrolment = await startTotpEnrolment(server.core, account!, 'Acme')
    const totp = new TOTP({ secret: Secret.fromBase32(enrolment!.secret) })
    // Confirmed with the previous step's code: the sign-in's code (this step's) is then unused.
    const earlier = totp.generate({ timestamp: Date.now() - 30_000 })
    expect(await useTotpCode(server.core.store, server.core, account!.id, earlier, { confirm: true })).toBe(
      true,
    )
    await setPolicy(server, ws, { mfa: 'required' })

    const page = await owner.agent.follow(await startTry(owner), {}, atCallback)
    const back = await signInThere(owner.agent, page, () => totp.generate())
    const html = await (await owner.agent.request(back)).text()
    expect(shownJson(html, 'try-claims-json').amr).toEqual(['pwd', 'otp'])
    expect(html).toContain('<code>otp</code>: <span>one-time code')
    expect(html).toContain('A second factor was used.')
  })
})

describe("a try's stored row", () => {
  /** A new try of the owner at the other workspace, alone in the store: the PKCE challenge it sent and its row. */
  async function startedTry() {
    await server.core.store.query('DELETE FROM try_sign_ins', [])
    const authorize = await startTry(owner, other)
    const rows = await server.core.store.query<{ key: string; code_verifier: string }>(
      'SELECT key, code_verifier FROM try_sign_ins',
      [],
    )
    expect(rows).toHaveLength(1)
    return { authorize, challenge: authorize.searchParams.get('code_challenge')!, ...rows[0]! }
  }
  const katherine = { email: 'katherine@example.com', password: 'a long password 1', name: '' }
  const atOtherCallback = (u: URL) => u.pathname === callbackPath(other)
  it('holds the PKCE verifier sealed: a reader of the store cannot redeem a code with it', async () => {
    const { authorize, challenge, code_verifier: stored } = await startedTry()
    expect(stored).toStartWith('v1.')
    expect(pkceS256(stored)).not.toBe(challenge)
    const back = await signUpEndUser(
      owner.agent,
      authorize,
      katherine,
      `${server.baseUrl}${callbackPath(other)}`,
    )
    const res = await owner.agent.request(back)
    expect(res.status).toBe(200)
    expect(shownJson(await res.text(), 'try-claims-json').email).toBe('katherine@example.com')
  })

  it('refuses a row stored plain before verifiers were sealed: the try starts again', async () => {
    const { authorize, challenge, key, code_verifier: stored } = await startedTry()
    // The row as the release before wrote it: the verifier itself.
    const plain = server.core.secrets.open(stored, tryVerifierContext(key))
    expect(pkceS256(plain)).toBe(challenge)
    await server.core.store.query('UPDATE try_sign_ins SET code_verifier = $1 WHERE key = $2', [plain, key])
    // A real code for this try (prompt=login: the sign-in form again), so only the row can refuse it.
    const page = await owner.agent.follow(authorize, {}, atOtherCallback)
    const fields = { email: katherine.email, password: katherine.password }
    const back = await owner.agent.submit(await page.res.text(), page.url, '/login', fields, atOtherCallback)
    expect(back.url.searchParams.get('code')).toBeTruthy()
    const res = await owner.agent.request(back.url)
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('expired')
    expect((await server.core.db.select({ n: count() }).from(trySignIns))[0]!.n).toBe(0)
  })
})
