import { PLATFORM } from '../../src/identity'
import { findAccountByEmail, markEmailVerified } from '../../src/identity/accounts'
import { Agent } from './browserless'
import type { TestServer } from './server'

export interface PlatformUser {
  agent: Agent
  /** The session's CSRF token (GET /v1/auth/me `csrf_token`), needed on every unsafe session call. */
  csrf: string
  /** The platform account id (GET /v1/auth/me `id`): the owner id of the user's workspaces. */
  id: string
  /** A control-plane access token from the device flow, when asked for with `bearer: true`. */
  bearer?: string
}

const csrfOf = new WeakMap<Agent, string>()
const isDashboard = (u: URL) => u.pathname.startsWith('/app/')

/**
 * Signs a new user up on the platform through the hosted pages, as a browser would:
 * GET /v1/auth/login → sign-in page → "Create an account" → sign-up form → callback → /app/….
 * With `bearer: true` the same user also approves a device flow and gets an access token.
 */
export async function signUpUser(
  server: TestServer,
  user: { email: string; password: string; name: string },
  opts: { bearer?: boolean } = {},
): Promise<PlatformUser> {
  const agent = new Agent(server.baseUrl)
  const first = await agent.follow('/v1/auth/login', {}, isDashboard)
  if (isDashboard(first.url)) throw new Error('a fresh agent should not have a session')
  const html = await first.res.text()
  if (!html.includes('Create an account')) throw new Error(`no sign-up link on:\n${html.slice(0, 500)}`)
  const signUpHref = html.match(/href="([^"]*\/signup)"/)?.[1]
  if (!signUpHref) throw new Error(`no sign-up link on:\n${html.slice(0, 500)}`)
  const page = await agent.follow(new URL(signUpHref.replace(/&amp;/g, '&'), first.url))
  const done = await agent.submit(await page.res.text(), page.url, '/signup', user, isDashboard)
  if (!isDashboard(done.url)) {
    throw new Error(`sign-up did not reach /app/ (${done.res.status} ${done.url}):\n${await done.res.text()}`)
  }
  const me = await agent.request('/v1/auth/me')
  if (me.status !== 200) throw new Error(`GET /v1/auth/me after sign-up answered ${me.status}`)
  const { csrf_token, id } = (await me.json()) as { csrf_token: string; id: string }
  csrfOf.set(agent, csrf_token)
  const signedUp: PlatformUser = { agent, csrf: csrf_token, id }
  if (opts.bearer) signedUp.bearer = (await deviceTokens(server, agent)).access_token
  return signedUp
}

/** Runs the device flow with an agent that already holds a platform session; returns the CLI's tokens. */
export async function deviceTokens(
  server: TestServer,
  agent: Agent,
): Promise<{ access_token: string; refresh_token?: string }> {
  const started = (await (
    await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
  ).json()) as {
    device_code: string
    verification_uri_complete: string
  }
  await approveDevice(agent, started.verification_uri_complete)
  const poll = await fetch(`${server.baseUrl}/v1/auth/device/poll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ device_code: started.device_code }),
  })
  const body = (await poll.json()) as { status: string; access_token?: string; refresh_token?: string }
  if (body.status !== 'complete' || !body.access_token)
    throw new Error(`device poll: ${JSON.stringify(body)}`)
  return { access_token: body.access_token, refresh_token: body.refresh_token }
}

/** Approves a device flow's code as its person would, with an agent holding a platform session. */
export async function approveDevice(agent: Agent, verificationUriComplete: string): Promise<void> {
  // verification_uri_complete answers a self-submitting form (the browser posts the code), then the
  // confirmation page with op.deviceConfirmForm ("Allow").
  let page = await agent.follow(verificationUriComplete)
  let html = await page.res.text()
  if (html.includes('Submitting Callback')) {
    page = await agent.submit(html, page.url, '/device', {})
    html = await page.res.text()
  }
  const form = /<form\b[^>]*id="op.deviceConfirmForm"[^>]*>/.exec(html)?.[0]
  const action = form && /action="([^"]*)"/.exec(form)?.[1]
  if (!action) throw new Error(`no device confirm form on:\n${html.slice(0, 1500)}`)
  const approved = await agent.submit(html, page.url, action, {})
  if (!(await approved.res.text()).includes('Device connected')) {
    throw new Error(`device approval did not finish (${approved.res.status} ${approved.url})`)
  }
}

/** A parsed JSON response body: tests assert its shape, so it is not typed further. */
// biome-ignore lint/suspicious/noExplicitAny: the tests assert the shape of every body they read
export type Json = any

export interface JsonResponse<T = Json> {
  status: number
  body: T
  res: Response
}

/**
 * A JSON call on the control plane with the agent's session, its CSRF token and a JSON body.
 * `body` is sent as JSON unless it is a string, which is sent as is (to send malformed JSON).
 */
export async function json<T = Json>(
  agent: Agent,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const csrf = csrfOf.get(agent)
  const res = await agent.request(path, {
    method,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(csrf ? { 'x-csrf-token': csrf } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {}
  return { status: res.status, body: parsed as T, res }
}

/** Polls until `check` returns a value other than undefined, or throws after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (e) {
      last = e
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: last })
    await Bun.sleep(everyMs)
  }
}

/** Polls GET /v1/workspaces/{id} until its state is `state`; returns the WorkspaceOut. */
export async function waitForState(
  agent: Agent,
  workspaceId: string,
  state: string,
  timeoutMs = 15_000,
): Promise<Record<string, unknown>> {
  let seen: unknown
  try {
    return await eventually(
      `workspace ${workspaceId} to be ${state}`,
      async () => {
        const r = await json(agent, 'GET', `/v1/workspaces/${workspaceId}`)
        seen = r.status === 200 ? r.body.state : `HTTP ${r.status}`
        return r.status === 200 && r.body.state === state ? (r.body as Record<string, unknown>) : undefined
      },
      timeoutMs,
    )
  } catch (e) {
    throw new Error(`${(e as Error).message} (last seen: ${String(seen)})`)
  }
}

/**
 * A new workspace of `user`'s, once active, whose end users sign up and in at once (no verified
 * address needed).
 */
export async function workspaceFor(
  user: PlatformUser,
  name: string,
): Promise<{ id: string; auth_url: string }> {
  const created = await json(user.agent, 'POST', '/v1/workspaces', { name })
  if (created.status !== 201) throw new Error(`POST /v1/workspaces answered ${created.status}`)
  const active = (await waitForState(user.agent, created.body.id, 'active')) as {
    id: string
    auth_url: string
  }
  const policy = { require_email_verification: false }
  const set = await json(user.agent, 'PATCH', `/v1/workspaces/${active.id}/login-policy`, policy)
  if (set.status !== 200) throw new Error(`PATCH login-policy answered ${set.status}`)
  return active
}

/**
 * Signs an END USER up on a workspace's hosted page through an authorization request (`authorizeUrl`),
 * stopping when the browser is sent back to the app (`redirectPrefix`); returns that URL.
 */
export async function signUpEndUser(
  agent: Agent,
  authorizeUrl: URL | string,
  user: { email: string; password: string; name: string },
  redirectPrefix: string,
): Promise<URL> {
  const back = (u: URL) => u.href.startsWith(redirectPrefix)
  const first = await agent.follow(authorizeUrl, {}, back)
  if (back(first.url)) return first.url
  const html = await first.res.text()
  const signUpHref = html.match(/href="([^"]*\/signup)"/)?.[1]
  if (!signUpHref)
    throw new Error(`no sign-up link (${first.res.status} ${first.url}):\n${html.slice(0, 500)}`)
  const page = await agent.follow(new URL(signUpHref.replace(/&amp;/g, '&'), first.url), {}, back)
  const done = await agent.submit(await page.res.text(), page.url, '/signup', user, back)
  if (!back(done.url)) {
    throw new Error(
      `sign-up did not return to the app (${done.res.status} ${done.url}):\n${await done.res.text()}`,
    )
  }
  return done.url
}

/** Marks a platform account's address proved, as following its verification link does. */
export async function verifyPlatformEmail(server: TestServer, email: string): Promise<void> {
  const account = await findAccountByEmail(server.core, PLATFORM, email)
  if (!account) throw new Error(`no platform account for ${email}`)
  await markEmailVerified(server.core, account)
}
