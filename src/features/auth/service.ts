import { eq, lt } from 'drizzle-orm'
import { jwtVerify } from 'jose'
import type { Core } from '../../core'
import { loginRequests } from '../../db/schema'
import type { IdentityBridge } from '../../identity/bridge'
import { DEVICE_POLL_INTERVAL_S } from '../../identity/device-polling'
import { issuerFor, PLATFORM } from '../../identity/instances'
import { localJwks } from '../../identity/keys'
import {
  CLI_CLIENT_ID,
  CONSOLE_CLIENT_ID,
  consoleClientSecret,
  consolePostLogoutUri,
  consoleRedirectUri,
} from '../../identity/platform'
import { controlPlaneAudience } from '../../identity/provider'
import { randomToken } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { createWorkspaceService } from '../workspaces/service'
import { createSession, LOGIN_REQUEST_TTL_MS } from './sessions'

const LOGIN_SCOPE = 'openid email profile'
export const IDP_HINTS = ['google', 'github', 'microsoft'] as const

/**
 * `next` must be a path on this site: one leading `/`, never `//` or `/\` (protocol-relative to a
 * browser), no scheme, no control characters or backslashes. Anything else is dropped.
 */
export function safeNext(next: string | undefined): string | null {
  if (!next || next.length > 2048) return null
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return null
  for (const ch of next) {
    const code = ch.charCodeAt(0)
    if (code < 0x20 || code === 0x7f || ch === '\\') return null
  }
  try {
    const resolved = new URL(next, 'http://gatehouse.invalid')
    if (resolved.origin !== 'http://gatehouse.invalid') return null
    return resolved.pathname + resolved.search + resolved.hash
  } catch {
    return null
  }
}

const s256 = async (verifier: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))).toString('base64url')

export interface AuthServiceDeps {
  core: Core
  bridge: IdentityBridge
  /** External providers configured for the platform instance (none until IdPs exist). */
  configuredIdps?: () => string[]
}

export function createAuthService({ core, bridge, configuredIdps = () => [] }: AuthServiceDeps) {
  const issuer = issuerFor(core.config, PLATFORM)
  const jwks = () => localJwks(core, PLATFORM)
  const workspaceService = createWorkspaceService(core)
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(CONSOLE_CLIENT_ID)}:${encodeURIComponent(consoleClientSecret(core))}`).toString('base64')}`

  async function platformPost(
    path: string,
    form: Record<string, string>,
    headers: Record<string, string> = {},
  ) {
    const res = await bridge.fetch(PLATFORM, path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }

  return {
    /** GET /v1/auth/login: the authorization request (code + PKCE + nonce) to the platform instance. */
    async startLogin(input: { idpHint?: string; next?: string }): Promise<string> {
      const now = core.clock.now()
      core.db
        .delete(loginRequests)
        .where(lt(loginRequests.createdAt, now - LOGIN_REQUEST_TTL_MS))
        .run()
      const state = randomToken(24)
      const nonce = randomToken(24)
      const codeVerifier = randomToken(48)
      core.db
        .insert(loginRequests)
        .values({ state, nonce, codeVerifier, next: safeNext(input.next), createdAt: now })
        .run()
      const params = new URLSearchParams({
        client_id: CONSOLE_CLIENT_ID,
        response_type: 'code',
        scope: LOGIN_SCOPE,
        redirect_uri: consoleRedirectUri(core),
        state,
        nonce,
        code_challenge: await s256(codeVerifier),
        code_challenge_method: 'S256',
        resource: controlPlaneAudience(core),
      })
      const hint = input.idpHint
      if (hint && (IDP_HINTS as readonly string[]).includes(hint) && configuredIdps().includes(hint)) {
        params.set('idp_hint', hint)
      }
      return `${issuer}/auth?${params}`
    },

    /** GET /v1/auth/callback: code exchange, ID token checks, a new session, and where to go next. */
    async finishLogin(query: { code?: string; state?: string; error?: string }) {
      const request = query.state
        ? core.db.delete(loginRequests).where(eq(loginRequests.state, query.state)).returning().get()
        : undefined
      if (!request || request.createdAt < core.clock.now() - LOGIN_REQUEST_TTL_MS) {
        throw new AppError(
          'LOGIN_EXPIRED',
          400,
          'This sign-in attempt expired or was already used. Start again.',
        )
      }
      if (query.error || !query.code) {
        throw new AppError('LOGIN_DENIED', 400, 'Sign-in was cancelled or refused.')
      }
      const token = await platformPost(
        '/token',
        {
          grant_type: 'authorization_code',
          code: query.code,
          redirect_uri: consoleRedirectUri(core),
          code_verifier: request.codeVerifier,
        },
        { authorization: basic },
      )
      const idToken = token.body.id_token
      if (token.status !== 200 || typeof idToken !== 'string') {
        core.log.warn('login code exchange failed', { status: token.status, error: token.body.error })
        throw new AppError('LOGIN_FAILED', 400, 'Sign-in could not be completed. Start again.')
      }
      const { payload } = await jwtVerify(idToken, jwks(), {
        issuer,
        audience: CONSOLE_CLIENT_ID,
        currentDate: new Date(core.clock.now()),
      })
      if (payload.nonce !== request.nonce || typeof payload.sub !== 'string') {
        throw new AppError('LOGIN_FAILED', 400, 'Sign-in could not be completed. Start again.')
      }
      const session = createSession(core, payload.sub, idToken)
      const owned = workspaceService.count(payload.sub)
      const redirect = request.next ?? (owned === 0 ? '/app/workspaces/new' : '/app/')
      return { session, redirect }
    },

    /** RP-initiated logout at the platform instance, with id_token_hint, client id and a registered URI. */
    logoutUrl(idToken: string | null): string {
      const params = new URLSearchParams({
        client_id: CONSOLE_CLIENT_ID,
        post_logout_redirect_uri: consolePostLogoutUri(core),
      })
      if (idToken) params.set('id_token_hint', idToken)
      return `${issuer}/session/end?${params}`
    },

    /** POST /v1/auth/device/start (RFC 8628 §3.1) on behalf of a headless tool. */
    async startDevice(clientIp: string) {
      const res = await bridge.fetch(
        PLATFORM,
        '/device/auth',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_id: CLI_CLIENT_ID,
            scope: `${LOGIN_SCOPE} offline_access`,
            resource: controlPlaneAudience(core),
          }).toString(),
        },
        clientIp,
      )
      const body = (await res.json()) as Record<string, unknown>
      if (res.status !== 200) {
        core.log.error('device authorization failed', { status: res.status, error: body.error })
        throw new AppError('DEVICE_START_FAILED', 502, 'Could not start the device flow')
      }
      const started = body as {
        device_code: string
        user_code: string
        verification_uri: string
        verification_uri_complete: string
        expires_in: number
        interval?: number
      }
      // RFC 8628 §3.2: absent interval means 5 seconds; say it explicitly to clients.
      return { ...started, interval: started.interval ?? DEVICE_POLL_INTERVAL_S }
    },

    /** POST /v1/auth/device/poll: the token request (RFC 8628 §3.4), errors mapped to a status. */
    async pollDevice(deviceCode: string) {
      const { status, body } = await platformPost('/token', {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: deviceCode,
        client_id: CLI_CLIENT_ID,
      })
      if (status === 200) {
        return {
          status: 'complete' as const,
          access_token: body.access_token as string,
          token_type: body.token_type as string,
          expires_in: body.expires_in as number,
          id_token: body.id_token as string | undefined,
          refresh_token: body.refresh_token as string | undefined,
          scope: body.scope as string | undefined,
        }
      }
      const map: Record<string, 'pending' | 'slow_down' | 'expired' | 'denied'> = {
        authorization_pending: 'pending',
        slow_down: 'slow_down',
        expired_token: 'expired',
        access_denied: 'denied',
        invalid_grant: 'expired',
      }
      return { status: map[String(body.error)] ?? ('expired' as const) }
    },
  }
}

export type AuthService = ReturnType<typeof createAuthService>
