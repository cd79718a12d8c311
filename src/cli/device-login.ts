import { decodeJwt } from 'jose'
import { withBackoff } from '../shared/backoff'
import type { ApiClient, TokenSource } from './api'
import type { CredentialStore, StoredLogin } from './config-store'
import { CliError, EXIT } from './exit-codes'

interface DeviceStart {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

interface DevicePoll {
  status: 'pending' | 'complete' | 'slow_down' | 'expired' | 'denied'
  access_token?: string
  expires_in?: number
  refresh_token?: string
}

interface DeviceLoginOptions {
  /** The control plane, unauthenticated. */
  api: ApiClient
  /** Tells the person what to do (stderr). */
  say: (text: string) => void
  /** Opens the approval page in a browser, when this machine can. */
  openBrowser: (url: string) => void
  sleep?: (ms: number) => Promise<void>
  now?: () => number
}

/**
 * The device authorization flow (RFC 8628) through the control plane's /v1/auth/device routes:
 * shows the code and where to enter it, then polls every `interval` seconds, 5 more after each
 * `slow_down` (§3.5), until the person approves, denies, or the code expires.
 */
export async function deviceLogin(opts: DeviceLoginOptions): Promise<StoredLogin> {
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms))
  const now = opts.now ?? Date.now
  const started = await opts.api.post<DeviceStart>('/v1/auth/device/start')
  opts.say(`To sign in, open ${started.verification_uri} and enter the code: ${started.user_code}`)
  opts.say(`Or open this link, which carries the code: ${started.verification_uri_complete}`)
  opts.openBrowser(started.verification_uri_complete)
  opts.say('Waiting for approval…')
  const deadline = now() + started.expires_in * 1000
  let interval = started.interval
  while (now() < deadline) {
    await sleep(interval * 1000)
    const poll = await opts.api.post<DevicePoll>('/v1/auth/device/poll', { device_code: started.device_code })
    if (poll.status === 'complete' && poll.access_token) return storedLogin(poll, undefined, now())
    if (poll.status === 'slow_down') interval += 5
    else if (poll.status === 'denied') throw new CliError('the sign-in was denied', EXIT.NOT_AUTHENTICATED)
    else if (poll.status === 'expired') break
  }
  throw new CliError(
    'the code expired before it was approved: run `gatehouse login` again',
    EXIT.NOT_AUTHENTICATED,
  )
}

/** What is kept of a token answer: the issuer and client come from the access token (RFC 9068 §2.2). */
function storedLogin(
  tokens: { access_token?: string; expires_in?: number; refresh_token?: string },
  previous?: StoredLogin,
  now = Date.now(),
): StoredLogin {
  const claims = decodeJwt(tokens.access_token!)
  return {
    access_token: tokens.access_token!,
    refresh_token: tokens.refresh_token ?? previous?.refresh_token ?? null,
    expires_at: now + (tokens.expires_in ?? 3600) * 1000,
    issuer: String(claims.iss ?? previous?.issuer),
    client_id: String(claims.client_id ?? previous?.client_id),
    email: previous?.email ?? null,
  }
}

/** The platform instance's endpoints (OpenID Connect Discovery 1.0 §4). */
async function discover(issuer: string): Promise<{ token_endpoint: string; revocation_endpoint?: string }> {
  const res = await withBackoff(() => fetch(`${issuer}/.well-known/openid-configuration`))
  if (!res.ok) throw new CliError(`${issuer} answered ${res.status} to discovery`)
  return res.json() as Promise<{ token_endpoint: string; revocation_endpoint?: string }>
}

/** Form-encoded POST to the platform instance (RFC 6749 §3.2), with SPEC's backoff on 429/503. */
function formPost(url: string, form: Record<string, string>): Promise<Response> {
  return withBackoff(() =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form),
    }),
  )
}

/** Revokes a login's refresh token at the platform instance (RFC 7009); best effort, for logout. */
export async function revokeLogin(login: StoredLogin): Promise<void> {
  if (!login.refresh_token) return
  const { revocation_endpoint } = await discover(login.issuer)
  if (!revocation_endpoint) return
  await formPost(revocation_endpoint, {
    token: login.refresh_token,
    token_type_hint: 'refresh_token',
    client_id: login.client_id,
  })
}

/**
 * A person's stored login as the bearer of API calls: the access token while it has a minute left,
 * else a fresh one from the refresh token (RFC 6749 §6), stored again with the rotated refresh token.
 */
export class StoredLoginAuth implements TokenSource {
  constructor(
    private readonly store: CredentialStore,
    private readonly baseUrl: string,
    private login: StoredLogin,
    private readonly now: () => number = Date.now,
  ) {}

  describe(): string {
    return `${this.login.email ?? 'your login'} on ${this.baseUrl}`
  }

  async token(): Promise<string> {
    if (this.login.expires_at - 60_000 > this.now()) return this.login.access_token
    const expired = new CliError(
      `your login on ${this.baseUrl} has expired: run \`gatehouse login\``,
      EXIT.NOT_AUTHENTICATED,
    )
    if (!this.login.refresh_token) throw expired
    const { token_endpoint } = await discover(this.login.issuer)
    const res = await formPost(token_endpoint, {
      grant_type: 'refresh_token',
      refresh_token: this.login.refresh_token,
      client_id: this.login.client_id,
    })
    const body = (await res.json().catch(() => ({}))) as { error?: string; access_token?: string }
    // RFC 6749 §5.2: invalid_grant is a refresh token expired, revoked or used already.
    if (body.error === 'invalid_grant') throw expired
    if (!res.ok || !body.access_token)
      throw new CliError(`refreshing your login failed: ${body.error ?? `HTTP ${res.status}`}`)
    this.login = storedLogin(body, this.login, this.now())
    this.store.save(this.baseUrl, this.login)
    return this.login.access_token
  }
}
