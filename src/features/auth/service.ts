import { inArray, lt } from 'drizzle-orm'
import { jwtVerify } from 'jose'
import type { Core } from '../../core'
import { type IdentityPlane, PLATFORM, platformClient } from '../../identity'
import { pkceS256, randomToken } from '../../shared/crypto'
import { appError } from '../../shared/errors'
import { createWorkspaceService } from '../workspaces/service'
import { AuthErrors } from './errors'
import { addPendingLogin, loginRequestKey } from './login-binding'
import { loginRequests } from './schema'
import { createSession, LOGIN_REQUEST_TTL_MS } from './sessions'

const LOGIN_SCOPE = 'openid email profile'
const IDP_HINTS = ['google', 'github', 'microsoft'] as const

const NEXT_MAX_LENGTH = 2048
// Printable ASCII only: our own paths reach `next` percent-encoded, so a raw control character,
// backslash or non-ASCII look-alike (fullwidth solidus, bidi override) is never legitimate.
const PRINTABLE_ASCII = /^[\x21-\x7e]*$/
const ENCODED_SLASH = /%(2f|5c)/i

/**
 * `next` must stay a path on this site (SPEC "Rules for login" 2). The raw value is normalised as
 * a browser would (dot segments, `%2e`), then the RESULT is checked: one leading `/`, never `//`
 * (protocol-relative), no backslash or control character raw or percent-decoded, no encoded
 * slash in the path, and it resolves against BASE_URL to BASE_URL's origin. Anything else is
 * dropped (null), and the default target applies.
 */
export function safeNext(next: string | undefined, baseUrl: string): string | null {
  if (!next || next.length > NEXT_MAX_LENGTH || !PRINTABLE_ASCII.test(next) || next.includes('\\')) {
    return null
  }
  if (!next.startsWith('/')) return null
  const origin = new URL(baseUrl).origin
  let resolved: URL
  try {
    resolved = new URL(next, origin)
  } catch {
    return null
  }
  if (resolved.origin !== origin) return null
  const normalised = resolved.pathname + resolved.search + resolved.hash
  return isLocalPath(normalised, origin) ? normalised : null
}

function isLocalPath(path: string, origin: string): boolean {
  if (!path.startsWith('/') || path.startsWith('//') || path.includes('\\')) return false
  const pathname = path.replace(/[?#].*$/s, '')
  if (ENCODED_SLASH.test(pathname)) return false
  let decoded: string
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return false
  }
  // Decoded too, for whatever decodes the path later: still printable ASCII, no leading `//`, no backslash.
  if (!PRINTABLE_ASCII.test(decoded) || decoded.startsWith('//') || decoded.includes('\\')) return false
  // A fixed point: resolving the final value again changes neither the origin nor the path.
  const again = new URL(path, origin)
  return again.origin === origin && again.pathname + again.search + again.hash === path
}

type LoginRequest = typeof loginRequests.$inferSelect

/** The AAD of a login's sealed PKCE verifier: its row's key, so a sealed value moved to another row does not open. */
export const loginVerifierContext = (key: string) => `login-verifier:${key}`

/** Deletes and answers the one row among `keys`: at most one exists, since each key hashes a random secret. */
async function takeLoginRequestRow(core: Core, keys: string[]): Promise<LoginRequest | undefined> {
  const [row] = await core.db.delete(loginRequests).where(inArray(loginRequests.state, keys)).returning()
  return row
}

/**
 * The login's PKCE verifier. A row that does not open was written plain before verifiers were sealed
 * (or altered): it lives minutes, so that sign-in is refused as expired and starts again, rather
 * than a plain value being trusted.
 */
function openVerifier(core: Core, request: LoginRequest): string {
  try {
    return core.secrets.open(request.codeVerifierSealed, loginVerifierContext(request.state))
  } catch {
    throw appError(AuthErrors.LOGIN_EXPIRED, 400)
  }
}

interface AuthServiceDeps {
  core: Core
  identity: IdentityPlane
}

export function createAuthService({ core, identity }: AuthServiceDeps) {
  const platform = platformClient(core)
  const { issuer } = platform
  const workspaceService = createWorkspaceService(core)
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(platform.clientId)}:${encodeURIComponent(platform.clientSecret)}`).toString('base64')}`

  async function platformPost(
    path: string,
    form: Record<string, string>,
    headers: Record<string, string> = {},
  ) {
    const res = await identity.fetch(PLATFORM, path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }

  return {
    /**
     * GET /v1/auth/login: the authorization request (code + PKCE + nonce) to the platform instance,
     * bound to this browser by a new secret added to its `pending` ones (see login-binding.ts).
     */
    async startLogin(input: {
      idpHint?: string
      next?: string
      pending: string[]
    }): Promise<{ url: string; pending: string[] }> {
      const now = core.clock.now()
      await core.db.delete(loginRequests).where(lt(loginRequests.createdAt, now - LOGIN_REQUEST_TTL_MS))
      const { secret, pending } = addPendingLogin(input.pending)
      const state = randomToken(24)
      const nonce = randomToken(24)
      const codeVerifier = randomToken(48)
      const key = loginRequestKey(secret, state)
      await core.db.insert(loginRequests).values({
        state: key,
        nonce,
        codeVerifierSealed: core.secrets.seal(codeVerifier, loginVerifierContext(key)),
        next: safeNext(input.next, core.config.baseUrl),
        createdAt: now,
      })
      const params = new URLSearchParams({
        client_id: platform.clientId,
        response_type: 'code',
        scope: LOGIN_SCOPE,
        redirect_uri: platform.redirectUri,
        state,
        nonce,
        code_challenge: pkceS256(codeVerifier),
        code_challenge_method: 'S256',
        resource: platform.audience,
      })
      // SPEC login rule 1: a hint names a provider configured for the platform (GOOGLE_CLIENT_ID, …);
      // any other is ignored, and the platform's sign-in page shows every way in.
      const hint = input.idpHint
      if (
        hint &&
        (IDP_HINTS as readonly string[]).includes(hint) &&
        core.config.idps.platform.some((i) => i.type === hint)
      ) {
        params.set('idp_hint', hint)
      }
      return { url: `${issuer}/auth?${params}`, pending }
    },

    /**
     * The first half of GET /v1/auth/callback: takes (deletes) the login transaction that `state`
     * names for one of this browser's `pending` secrets. Single use; a callback from a browser that
     * did not start the login finds nothing and leaves the transaction to its owner.
     */
    async takeLoginRequest(
      state: string | undefined,
      pending: string[],
    ): Promise<{ request: LoginRequest; pending: string[] }> {
      const keys = state ? pending.map((secret) => loginRequestKey(secret, state)) : []
      const request = keys.length ? await takeLoginRequestRow(core, keys) : undefined
      if (!request || request.createdAt < core.clock.now() - LOGIN_REQUEST_TTL_MS) {
        throw appError(AuthErrors.LOGIN_EXPIRED, 400)
      }
      return { request, pending: pending.filter((_, i) => keys[i] !== request.state) }
    },

    /** The second half of the callback: code exchange, ID token checks, a new session, where to go next. */
    async finishLogin(request: LoginRequest, query: { code?: string; error?: string }) {
      if (query.error || !query.code) {
        throw appError(AuthErrors.LOGIN_DENIED, 400)
      }
      const token = await platformPost(
        '/token',
        {
          grant_type: 'authorization_code',
          code: query.code,
          redirect_uri: platform.redirectUri,
          code_verifier: openVerifier(core, request),
        },
        { authorization: basic },
      )
      const idToken = token.body.id_token
      if (token.status !== 200 || typeof idToken !== 'string') {
        core.log.warn('login code exchange failed', { status: token.status, error: token.body.error })
        throw appError(AuthErrors.LOGIN_FAILED, 400)
      }
      // A token our own instance just issued fails only on a key or clock mishap: a 400, never a 500.
      const payload = await jwtVerify(idToken, platform.jwks(), {
        issuer,
        audience: platform.clientId,
        currentDate: new Date(core.clock.now()),
      }).then(
        (r) => r.payload,
        (e) => {
          core.log.warn('login id token refused', { error: (e as Error).message })
          return null
        },
      )
      if (!payload || payload.nonce !== request.nonce || typeof payload.sub !== 'string') {
        throw appError(AuthErrors.LOGIN_FAILED, 400)
      }
      const session = await createSession(core, payload.sub, idToken)
      const owned = await workspaceService.count(payload.sub)
      // Checked again on the way out: the stored value is only ever used as this site's path.
      const next = safeNext(request.next ?? undefined, core.config.baseUrl)
      const redirect = next ?? (owned === 0 ? '/app/workspaces/new' : '/app/')
      return { session, redirect }
    },

    /** RP-initiated logout at the platform instance, with id_token_hint, client id and a registered URI. */
    logoutUrl(idToken: string | null): string {
      const params = new URLSearchParams({
        client_id: platform.clientId,
        post_logout_redirect_uri: platform.postLogoutRedirectUri,
      })
      if (idToken) params.set('id_token_hint', idToken)
      return `${issuer}/session/end?${params}`
    },

    /** POST /v1/auth/device/start (RFC 8628 §3.1) on behalf of a headless tool. */
    async startDevice(clientIp: string) {
      const res = await identity.fetch(
        PLATFORM,
        '/device/auth',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_id: platform.cliClientId,
            scope: `${LOGIN_SCOPE} offline_access`,
            resource: platform.audience,
          }).toString(),
        },
        clientIp,
      )
      const body = (await res.json()) as Record<string, unknown>
      if (res.status !== 200) {
        core.log.error('device authorization failed', { status: res.status, error: body.error })
        throw appError(AuthErrors.DEVICE_START_FAILED, 502)
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
      return { ...started, interval: started.interval ?? platform.devicePollIntervalSeconds }
    },

    /** POST /v1/auth/device/poll: the token request (RFC 8628 §3.4), errors mapped to a status. */
    async pollDevice(deviceCode: string) {
      const { status, body } = await platformPost('/token', {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: deviceCode,
        client_id: platform.cliClientId,
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
