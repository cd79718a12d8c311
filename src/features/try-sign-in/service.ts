import { and, eq } from 'drizzle-orm'
import { type JWTPayload, jwtVerify } from 'jose'
import type { Core } from '../../core'
import { deleteInBatches } from '../../db/batch-delete'
import type { IdentityPlane } from '../../identity'
import { pkceS256, randomToken, sha256Hex } from '../../shared/crypto'
import { appError } from '../../shared/errors'
import type { Workspace } from '../workspaces/service'
import { tryClient } from './client'
import { TrySignInErrors } from './errors'
import { trySignIns } from './schema'

/** How long a started try may be finished (the hosted pages' own interaction lives about as long). */
const TRY_SIGN_IN_TTL_MS = 10 * 60_000

/** The row of a try: neither the session alone nor the state alone finds it (login CSRF, RFC 6749 §10.12). */
const tryKey = (sessionHash: string, state: string) => sha256Hex(`${sessionHash}.${state}`)

/** The AAD of a try's sealed PKCE verifier: its row's key, so a sealed value moved to another row does not open. */
export const tryVerifierContext = (key: string) => `try-verifier:${key}`

interface CallbackQuery {
  code?: string
  state?: string
  error?: string
  error_description?: string
  iss?: string
}

/** What a finished try shows: the ID token's header and claims and the userinfo answer. Never a token. */
export interface TryResult {
  clientId: string
  header: { alg?: string; kid?: string }
  claims: JWTPayload
  userinfo: { status: number; body: unknown }
}

/**
 * "Try sign-in": the dashboard as a relying party of a workspace's instance, through that
 * instance's built-in try client (`tryClient`, client.ts). A run starts with an authorization
 * request (code, PKCE, nonce, prompt=login so the sign-in page shows even where the browser has a
 * session at the instance) and ends at the callback with the code exchanged in-process, the ID token
 * verified against the instance's keys and userinfo asked. The tokens live only in this call.
 */
export function createTrySignInService(core: Core, identity: IdentityPlane) {
  async function post(workspaceId: string, path: string, form: Record<string, string>) {
    const res = await identity.fetch(workspaceId, path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }

  /**
   * The try's PKCE verifier. A row that does not open was written plain before verifiers were
   * sealed (or altered): it lives minutes, so that try is refused as expired and runs again, rather
   * than a plain value being trusted.
   */
  function openVerifier(row: typeof trySignIns.$inferSelect): string {
    try {
      return core.secrets.open(row.codeVerifierSealed, tryVerifierContext(row.key))
    } catch {
      throw appError(TrySignInErrors.EXPIRED, 400)
    }
  }

  return {
    /** The authorization request of a new try in this dashboard session. */
    async start(workspace: Workspace, sessionHash: string): Promise<string> {
      if (workspace.state !== 'active') throw appError(TrySignInErrors.NOT_ACTIVE, 409)
      const client = tryClient(core, workspace.id)
      const state = randomToken(24)
      const nonce = randomToken(24)
      const codeVerifier = randomToken(48)
      const key = tryKey(sessionHash, state)
      await core.db.insert(trySignIns).values({
        key,
        workspaceId: workspace.id,
        nonce,
        codeVerifierSealed: core.secrets.seal(codeVerifier, tryVerifierContext(key)),
        createdAt: core.clock.now(),
      })
      const params = new URLSearchParams({
        client_id: client.clientId,
        response_type: 'code',
        scope: client.scope,
        redirect_uri: client.redirectUri,
        state,
        nonce,
        code_challenge: pkceS256(codeVerifier),
        code_challenge_method: 'S256',
        prompt: 'login',
      })
      return `${client.issuer}/auth?${params}`
    },

    /** The callback: takes (deletes) the try `state` names in this session, then exchanges and checks. */
    async finish(workspace: Workspace, sessionHash: string, query: CallbackQuery): Promise<TryResult> {
      const [row] = query.state
        ? await core.db
            .delete(trySignIns)
            .where(
              and(
                eq(trySignIns.key, tryKey(sessionHash, query.state)),
                eq(trySignIns.workspaceId, workspace.id),
              ),
            )
            .returning()
        : []
      if (!row || row.createdAt < core.clock.now() - TRY_SIGN_IN_TTL_MS) {
        throw appError(TrySignInErrors.EXPIRED, 400)
      }
      const codeVerifier = openVerifier(row)
      const client = tryClient(core, workspace.id)
      // RFC 9207 §2.4: an answer that names another issuer is not this instance's.
      if (query.iss !== undefined && query.iss !== client.issuer) throw appError(TrySignInErrors.FAILED, 400)
      if (query.error || !query.code) {
        const said = [query.error, query.error_description].filter(Boolean).join(': ')
        throw appError(TrySignInErrors.DENIED, 400, {
          message: said ? `The sign-in did not finish: ${said}` : undefined,
        })
      }
      const token = await post(workspace.id, '/token', {
        grant_type: 'authorization_code',
        code: query.code,
        redirect_uri: client.redirectUri,
        code_verifier: codeVerifier,
        client_id: client.clientId,
      })
      const { id_token: idToken, access_token: accessToken } = token.body
      if (token.status !== 200 || typeof idToken !== 'string' || typeof accessToken !== 'string') {
        core.log.warn('try sign-in code exchange failed', {
          workspace_id: workspace.id,
          status: token.status,
          error: token.body.error,
        })
        throw appError(TrySignInErrors.FAILED, 400)
      }
      const verified = await jwtVerify(idToken, client.jwks(), {
        issuer: client.issuer,
        audience: client.clientId,
        currentDate: new Date(core.clock.now()),
      }).catch((e: Error) => {
        core.log.warn('try sign-in id token refused', { workspace_id: workspace.id, error: e.message })
        return null
      })
      if (!verified || verified.payload.nonce !== row.nonce) throw appError(TrySignInErrors.FAILED, 400)
      const info = await identity.fetch(workspace.id, '/me', {
        headers: { authorization: `Bearer ${accessToken}` },
      })
      const text = await info.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // Shown as the text it is.
      }
      return {
        clientId: client.clientId,
        header: { alg: verified.protectedHeader.alg, kid: verified.protectedHeader.kid },
        claims: verified.payload,
        userinfo: { status: info.status, body },
      }
    },
  }
}

/** Removes tries nobody finished. */
export async function purgeExpiredTrySignIns(core: Core): Promise<Record<string, number>> {
  return {
    try_sign_ins: await deleteInBatches(core.store, 'try_sign_ins', 'created_at <= $1', [
      core.clock.now() - TRY_SIGN_IN_TTL_MS,
    ]),
  }
}

/** The teardown step: a deleted workspace's unfinished tries. */
export async function deleteWorkspaceTrySignIns(core: Core, workspaceId: string): Promise<void> {
  await core.db.delete(trySignIns).where(eq(trySignIns.workspaceId, workspaceId))
}
