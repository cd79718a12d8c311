// Fixtures made as users make them, through the public API of a running bench server: a platform
// account signed up on the hosted pages (its dashboard session), workspaces created with
// POST /v1/workspaces and waited for until `active` (the job worker provisions them, keys and all),
// apps created with POST …/apps, end users signed up on a workspace's hosted pages. Until 2026-12-05
// the bench wrote these rows straight into the store, so it never ran provisioning under load and
// never saw the 500 it gave on SQLite (issue 56). It works on either store alike.
//
// Every response of the setup is counted by status (`Api.statuses`), and any 5xx throws at once
// with its body: a bench must not measure a server that failed while being set up.
import { randomBytes } from 'node:crypto'
import { Agent } from '../../tests/support/browserless'
import type { BenchSession, BenchWorkspace } from './setup'
import { authorizeUrl } from './sign-in'

/** Where the hosted sign-in sends a signed-in platform user: the dashboard. */
const isDashboard = (u: URL) => u.pathname.startsWith('/app/')
const unescapeAmp = (s: string) => s.replace(/&amp;/g, '&')

/** Statuses of every setup response; a 5xx throws. */
class StatusTally {
  private readonly counts = new Map<number, number>()

  async record(what: string, res: Response): Promise<Response> {
    this.counts.set(res.status, (this.counts.get(res.status) ?? 0) + 1)
    if (res.status >= 500)
      throw new Error(`setup: ${what} answered ${res.status}: ${(await res.text()).slice(0, 500)}`)
    return res
  }

  /** `412 requests: 200 ×300, 201 ×101, 303 ×11`. */
  toString(): string {
    const total = [...this.counts.values()].reduce((a, b) => a + b, 0)
    const each = [...this.counts].sort(([a], [b]) => a - b).map(([s, n]) => `${s} ×${n}`)
    return `${total} requests: ${each.join(', ')}`
  }
}

/** A cookie-keeping agent whose every response goes through the tally. */
class CountingAgent extends Agent {
  constructor(
    origin: string,
    private readonly tally: StatusTally,
  ) {
    super(origin)
  }

  override async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const res = await super.request(url, init)
    return this.tally.record(`${init.method ?? 'GET'} ${new URL(url, 'http://x').pathname}`, res)
  }
}

interface WorkspaceOut {
  id: string
  state: string
  provisioning_error: string | null
}

export interface CreateOptions {
  /** Web apps to create (default 1); the first one's credentials are returned. */
  apps?: number
  redirectUri?: string
  /** How often a provisioning workspace is asked for its state. */
  pollMs?: number
  /** A workspace not active by then fails the setup. */
  timeoutMs?: number
}

/** The public API of the bench server at `origin`, called as a user calls it. */
export class Api {
  readonly statuses = new StatusTally()

  constructor(readonly origin: string) {}

  /** A fetch of `path` (below the origin) whose response is counted; throws on a 5xx. */
  private async call(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(`${this.origin}${path}`, init)
    return this.statuses.record(`${init.method ?? 'GET'} ${path}`, res)
  }

  /** The JSON body of a call that must answer `want`. */
  private async expect<T>(path: string, init: RequestInit, want: number): Promise<T> {
    const res = await this.call(path, init)
    const text = await res.text()
    if (res.status !== want)
      throw new Error(`setup: ${init.method ?? 'GET'} ${path} answered ${res.status}: ${text.slice(0, 300)}`)
    return JSON.parse(text) as T
  }

  /** A JSON call with `owner`'s dashboard session (cookie, and its CSRF token on writes) that must answer `want`. */
  asOwner<T>(owner: BenchSession, method: string, path: string, want: number, body?: unknown) {
    return this.expect<T>(
      path,
      {
        method,
        headers: {
          cookie: owner.cookie,
          ...(method === 'GET' ? {} : { 'x-csrf-token': owner.csrfToken }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      },
      want,
    )
  }

  /**
   * Signs a new platform account up on the hosted pages, as a browser does (GET /v1/auth/login →
   * the sign-in page → "Create an account" → the sign-up form → the dashboard), and returns its
   * dashboard session.
   */
  async signUpOwner(): Promise<BenchSession> {
    const agent = new CountingAgent(this.origin, this.statuses)
    const first = await agent.follow('/v1/auth/login', {}, isDashboard)
    const html = await first.res.text()
    const signUpHref = /href="([^"]*\/signup)"/.exec(html)?.[1]
    if (!signUpHref) throw new Error(`setup: no sign-up link on ${first.url}: ${html.slice(0, 300)}`)
    const page = await agent.follow(new URL(unescapeAmp(signUpHref), first.url))
    const user = {
      email: `owner-${randomBytes(6).toString('hex')}@bench.example`,
      password: randomBytes(18).toString('base64url'),
      name: 'Bench owner',
    }
    const done = await agent.submit(await page.res.text(), page.url, '/signup', user, isDashboard)
    if (!isDashboard(done.url))
      throw new Error(
        `setup: the platform sign-up ended at ${done.res.status} ${done.url}, not the dashboard`,
      )
    const me = (await (await agent.request('/v1/auth/me')).json()) as { id: string; csrf_token?: string }
    const name = ['gh_session', '__Host-gh_session'].find((n) => agent.cookie(n))
    if (!name || !me.csrf_token) throw new Error('setup: the platform sign-up left no dashboard session')
    return { accountId: me.id, cookie: `${name}=${agent.cookie(name)}`, csrfToken: me.csrf_token }
  }

  /**
   * POST /v1/workspaces, GET /v1/workspaces/{id} until `active` (throws if it ends otherwise or
   * outlasts `timeoutMs`), then `apps` web apps: the workspace with its first app's credentials.
   */
  async createWorkspace(owner: BenchSession, opts: CreateOptions = {}): Promise<BenchWorkspace> {
    const { pollMs = 200, timeoutMs = 300_000 } = opts
    const started = performance.now()
    let w = await this.asOwner<WorkspaceOut>(owner, 'POST', '/v1/workspaces', 201, { name: 'Bench' })
    while (w.state !== 'active') {
      if (w.state !== 'provisioning')
        throw new Error(`setup: workspace ${w.id} ended ${w.state}: ${w.provisioning_error}`)
      if (performance.now() - started > timeoutMs)
        throw new Error(`setup: workspace ${w.id} still provisioning after ${timeoutMs} ms`)
      await Bun.sleep(pollMs)
      w = await this.asOwner<WorkspaceOut>(owner, 'GET', `/v1/workspaces/${w.id}`, 200)
    }
    const credentials: { client_id: string; client_secret: string | null; issuer: string }[] = []
    for (let i = 1; i <= (opts.apps ?? 1); i++) {
      credentials.push(
        await this.asOwner(owner, 'POST', `/v1/workspaces/${w.id}/apps`, 201, {
          name: `bench web app ${i}`,
          app_type: 'web',
          redirect_uris: [opts.redirectUri ?? 'https://rp.example/cb'],
        }),
      )
    }
    const first = credentials[0]
    if (!first?.client_secret) throw new Error('setup: a workspace needs at least one web app')
    return {
      workspaceId: w.id,
      issuer: first.issuer,
      clientId: first.client_id,
      clientSecret: first.client_secret,
    }
  }

  /** `count` workspaces as createWorkspace makes them, `concurrency` at a time, in the order created. */
  async createWorkspaces(
    owner: BenchSession,
    count: number,
    opts: CreateOptions & { concurrency: number },
  ): Promise<BenchWorkspace[]> {
    const made: BenchWorkspace[] = new Array(count)
    let next = 0
    await Promise.all(
      Array.from({ length: Math.min(opts.concurrency, count) }, async () => {
        for (let i = next++; i < count; i = next++) made[i] = await this.createWorkspace(owner, opts)
      }),
    )
    return made
  }

  /** PATCH /v1/workspaces/{id}/login-policy with `changes` (LoginPolicyUpdate). */
  async setLoginPolicy(owner: BenchSession, workspaceId: string, changes: Record<string, unknown>) {
    await this.asOwner(owner, 'PATCH', `/v1/workspaces/${workspaceId}/login-policy`, 200, changes)
  }

  /**
   * Signs an end user up on `ws`'s hosted pages through an authorization request of its first app
   * (code, PKCE): the sign-in page → "Create an account" → the sign-up form → back to `redirectUri`
   * with a code. The workspace's login policy must let an unverified address through.
   */
  async signUpEndUser(
    ws: BenchWorkspace,
    redirectUri: string,
    user: { email: string; password: string; name: string },
  ): Promise<void> {
    const agent = new CountingAgent(this.origin, this.statuses)
    const back = (u: URL) => u.href.startsWith(redirectUri)
    const auth = authorizeUrl({ issuer: ws.issuer, clientId: ws.clientId, redirectUri }, 'sign-up')
    const first = await agent.follow(auth, {}, back)
    const html = await first.res.text()
    const signUpHref = /href="([^"]*\/signup)"/.exec(html)?.[1]
    if (!signUpHref) throw new Error(`setup: no sign-up link on ${first.url}: ${html.slice(0, 300)}`)
    const page = await agent.follow(new URL(unescapeAmp(signUpHref), first.url), {}, back)
    const done = await agent.submit(await page.res.text(), page.url, '/signup', user, back)
    if (!back(done.url) || !done.url.searchParams.get('code'))
      throw new Error(`setup: the sign-up of ${user.email} ended at ${done.res.status} ${done.url}`)
  }
}
