import { CodeChallengeMethod, generateCodeVerifier, generateState, OAuth2Client } from 'arctic'
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, errors as joseErrors, jwtVerify } from 'jose'
import { LRUCache } from 'lru-cache'
import type { NamedIdpEndpoints } from '../../config'
import type { Core } from '../../core'
import {
  BrokerRefused,
  type ExternalIdentity,
  type ExternalIdp,
  type ExternalSignIn,
  type ExternalStart,
} from '../../identity'
import { randomToken, safeEqual } from '../../shared/crypto'
import {
  type OutboundPolicy,
  OutboundRefused,
  outboundFetch,
  outboundUrlProblem,
} from '../../shared/outbound'

interface Endpoints {
  authorization: string
  token: string
  /** OpenID Connect only: the `iss` expected (Microsoft's holds `{tenantid}`) and the keys. */
  issuer?: string
  jwks?: string
  userinfo?: string
  /** GitHub's API. */
  api?: string
  tokenAuth: 'basic' | 'post'
  /** RFC 9207: the IdP names itself in its answer (`iss`), which is then checked. */
  issParameter?: boolean
}

const TIMEOUT_MS = 10_000
/** What one answer of an IdP may weigh (discovery documents and key sets are a few KiB). */
const MAX_BODY = 256 * 1024

/** The JSON of a response read up to MAX_BODY bytes, or null (too large, or not JSON). */
async function readJson(res: Response): Promise<unknown> {
  if (Number(res.headers.get('content-length') ?? 0) > MAX_BODY) {
    await res.body?.cancel()
    return null
  }
  const chunks: Uint8Array[] = []
  let size = 0
  if (!res.body) return null
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > MAX_BODY) {
      await res.body.cancel().catch(() => {})
      return null
    }
    chunks.push(chunk)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    return null
  }
}
const CACHE_TTL_MS = 10 * 60_000
/** The asymmetric algorithms an ID token may be signed with: never `none`, never HMAC. */
const ID_TOKEN_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
]
/** RFC 8176's registry: what an IdP's `amr` may carry into ours. */
const AMR_VALUES = new Set([
  'face',
  'fpt',
  'geo',
  'hwk',
  'iris',
  'kba',
  'mca',
  'mfa',
  'otp',
  'pin',
  'pwd',
  'rba',
  'retina',
  'sc',
  'sms',
  'swk',
  'tel',
  'user',
  'vbm',
  'wia',
])

/**
 * The external half of a sign-in through an IdP (DESIGN "IdPs"): the authorization request
 * (code + PKCE, `state`, and `nonce` for OpenID Connect) and the checks of its answer. The named
 * providers' endpoints come from configuration (`IDP_ENDPOINTS`, a local stand-in in tests); a
 * generic `oidc` IdP's from its discovery document. Every request to an `oidc` IdP, whose issuer a
 * workspace chose, goes through the outbound guard (no private address unless allowed, address
 * pinned, no redirect); the named ones are the operator's configuration.
 */
export class Broker implements ExternalSignIn {
  /** Caches, not state: a node that has none fetches the document again. */
  private readonly discovery = new LRUCache<string, Endpoints>({ max: 1000, ttl: CACHE_TTL_MS })
  private readonly keys = new LRUCache<string, JSONWebKeySet>({
    max: 1000,
    ttl: CACHE_TTL_MS,
    // Bounded by weight too: a thousand key sets of the largest size allowed would be 256 MiB.
    maxSize: 8 * 1024 * 1024,
    sizeCalculation: (set) => JSON.stringify(set).length || 1,
  })

  constructor(private readonly core: Core) {}

  private policyOf(idp: ExternalIdp): OutboundPolicy {
    return idp.type === 'oidc' && !idp.trusted
      ? this.core.config.idps
      : { allowHttp: true, allowPrivate: true }
  }

  private async fetch(idp: ExternalIdp, url: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await outboundFetch(url, { ...init, timeoutMs: TIMEOUT_MS }, this.policyOf(idp))
    } catch (e) {
      this.core.log.warn('external IdP unreachable', {
        idp: idp.id,
        host: new URL(url).host,
        error: e instanceof OutboundRefused ? e.message : String(e),
      })
      throw new BrokerRefused(`${idp.name} could not be reached. Try again later.`, 502)
    }
  }

  /** An IdP's JSON answer, read up to MAX_BODY bytes: a provider streaming without end is cut off. */
  private async json(idp: ExternalIdp, res: Response): Promise<Record<string, unknown>> {
    const body = await readJson(res)
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new BrokerRefused(`${idp.name} answered something that is not a sign-in.`, 502)
    return body as Record<string, unknown>
  }

  private async endpoints(idp: ExternalIdp): Promise<Endpoints> {
    if (idp.type !== 'oidc') {
      const named: NamedIdpEndpoints = this.core.config.idps.endpoints[idp.type]
      // GitHub takes the client's credentials in the body; the OpenID providers in either place.
      return { ...named, tokenAuth: idp.type === 'github' ? 'post' : 'basic' }
    }
    const issuer = idp.issuer ?? ''
    const cached = this.discovery.get(issuer)
    if (cached) return cached
    const res = await this.fetch(idp, `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, {
      headers: { accept: 'application/json' },
    })
    if (res.status !== 200) throw new BrokerRefused(`${idp.name} did not publish its configuration.`, 502)
    const doc = await this.json(idp, res)
    // OpenID Connect Discovery §4.3: the document's issuer is the one configured (a trailing slash
    // aside, which people add or leave out), and from then on exactly the document's.
    if (typeof doc.issuer !== 'string' || doc.issuer.replace(/\/$/, '') !== issuer.replace(/\/$/, ''))
      throw new BrokerRefused(`${idp.name} published another issuer's configuration.`, 502)
    const url = (key: string, required: boolean) => {
      const value = doc[key]
      if (value === undefined && !required) return undefined
      if (typeof value !== 'string' || outboundUrlProblem(value, this.core.config.idps))
        throw new BrokerRefused(`${idp.name} published an unusable ${key}.`, 502)
      return value
    }
    const methods = Array.isArray(doc.token_endpoint_auth_methods_supported)
      ? doc.token_endpoint_auth_methods_supported
      : ['client_secret_basic']
    const endpoints: Endpoints = {
      issuer: doc.issuer,
      authorization: url('authorization_endpoint', true)!,
      token: url('token_endpoint', true)!,
      jwks: url('jwks_uri', true)!,
      userinfo: url('userinfo_endpoint', false),
      tokenAuth: methods.includes('client_secret_basic') ? 'basic' : 'post',
      issParameter: doc.authorization_response_iss_parameter_supported === true,
    }
    this.discovery.set(issuer, endpoints)
    return endpoints
  }

  /** A new authorization request to the IdP: where to send the browser, and what to check on return. */
  async start(
    idp: ExternalIdp,
    redirectUri: string,
    uid: string,
  ): Promise<{ url: string; start: ExternalStart }> {
    const endpoints = await this.endpoints(idp)
    // The interaction's uid rides in `state`, so the callback knows which sign-in it returns to.
    const start: ExternalStart = {
      idpId: idp.id,
      state: `${uid}.${generateState()}`,
      nonce: randomToken(24),
      verifier: generateCodeVerifier(),
    }
    const url = new OAuth2Client(idp.clientId, null, redirectUri).createAuthorizationURLWithPKCE(
      endpoints.authorization,
      start.state,
      CodeChallengeMethod.S256,
      start.verifier,
      idp.scopes,
    )
    if (idp.type !== 'github') url.searchParams.set('nonce', start.nonce)
    return { url: url.href, start }
  }

  /**
   * The IdP's answer to `start`: the code exchanged and the user it names, every check passed. The
   * code goes only to the IdP the sign-in started with (kept in the interaction), and an IdP that
   * names itself in its answers (RFC 9207 `iss`) must name itself: an answer of another IdP sent
   * here (a mix-up) is refused before its code goes anywhere.
   */
  async finish(
    idp: ExternalIdp,
    redirectUri: string,
    start: ExternalStart,
    code: string,
    iss: string | null,
  ): Promise<ExternalIdentity> {
    const endpoints = await this.endpoints(idp)
    const expected = endpoints.issuer?.includes('{tenantid}') ? undefined : endpoints.issuer
    if (expected && (endpoints.issParameter || iss !== null) && iss !== expected)
      throw new BrokerRefused(`This answer did not come from ${idp.name}. Start again.`)
    const tokens = await this.exchange(idp, endpoints, redirectUri, code, start.verifier)
    const accessToken = typeof tokens.access_token === 'string' ? tokens.access_token : null
    if (idp.type === 'github') return this.githubUser(idp, endpoints, accessToken)
    if (typeof tokens.id_token !== 'string')
      throw new BrokerRefused(`${idp.name} did not say who signed in (no ID token).`, 502)
    return this.idTokenUser(idp, endpoints, tokens.id_token, start.nonce, accessToken)
  }

  /** The one code exchange (RFC 6749 §4.1.3 with RFC 7636's verifier) for every type. */
  private async exchange(
    idp: ExternalIdp,
    endpoints: Endpoints,
    redirectUri: string,
    code: string,
    verifier: string,
  ): Promise<Record<string, unknown>> {
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    })
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
    }
    const secret = idp.clientSecret()
    if (endpoints.tokenAuth === 'basic') {
      const pair = `${encodeURIComponent(idp.clientId)}:${encodeURIComponent(secret)}`
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`
    } else {
      body.set('client_id', idp.clientId)
      body.set('client_secret', secret)
    }
    const res = await this.fetch(idp, endpoints.token, { method: 'POST', headers, body })
    const tokens = await this.json(idp, res)
    // GitHub answers 200 with an `error` member.
    if (res.status !== 200 || typeof tokens.error === 'string') {
      this.core.log.warn('external IdP refused the code', {
        idp: idp.id,
        status: res.status,
        error: typeof tokens.error === 'string' ? tokens.error.slice(0, 100) : null,
      })
      throw new BrokerRefused(`${idp.name} did not accept this sign-in. Start again.`)
    }
    return tokens
  }

  private async jwks(idp: ExternalIdp, uri: string, fresh: boolean): Promise<JSONWebKeySet> {
    const cached = fresh ? undefined : this.keys.get(uri)
    if (cached) return cached
    const res = await this.fetch(idp, uri, { headers: { accept: 'application/json' } })
    const set = (await this.json(idp, res)) as unknown as JSONWebKeySet
    if (res.status !== 200 || !Array.isArray(set.keys))
      throw new BrokerRefused(`${idp.name} did not publish its keys.`, 502)
    this.keys.set(uri, set)
    return set
  }

  private async idTokenUser(
    idp: ExternalIdp,
    endpoints: Endpoints,
    idToken: string,
    nonce: string,
    accessToken: string | null,
  ): Promise<ExternalIdentity> {
    let issuer = endpoints.issuer ?? ''
    if (issuer.includes('{tenantid}')) {
      // Microsoft's `common` endpoints: the issuer is the user's own tenant, named in `tid`.
      let tid: unknown
      try {
        tid = decodeJwt(idToken).tid
      } catch {
        tid = null
      }
      if (typeof tid !== 'string' || !/^[0-9a-f-]{36}$/i.test(tid))
        throw new BrokerRefused(`${idp.name} sent an ID token without a valid tenant.`)
      issuer = issuer.replace('{tenantid}', tid)
    }
    const verify = async (fresh: boolean) =>
      jwtVerify(idToken, createLocalJWKSet(await this.jwks(idp, endpoints.jwks ?? '', fresh)), {
        issuer,
        audience: idp.clientId,
        algorithms: ID_TOKEN_ALGS,
        currentDate: new Date(this.core.clock.now()),
        clockTolerance: 60,
        requiredClaims: ['sub', 'iat', 'exp'],
      })
    let payload: Awaited<ReturnType<typeof verify>>['payload']
    try {
      // A key not in the cached set may be a rotation: the set is fetched again, once.
      payload = await verify(false)
        .catch((e) => {
          if (e instanceof joseErrors.JWKSNoMatchingKey) return verify(true).then((r) => r)
          throw e
        })
        .then((r) => r.payload)
    } catch (e) {
      if (e instanceof BrokerRefused) throw e
      const reason =
        e instanceof joseErrors.JWTClaimValidationFailed ? `${e.claim} ${e.reason}` : (e as Error).name
      this.core.log.warn('external ID token refused', { idp: idp.id, reason })
      throw new BrokerRefused(`${idp.name} sent an ID token that is not valid for this sign-in.`)
    }
    // Several audiences: this client must be the one it was issued to (OpenID Connect Core §3.1.3.7).
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== idp.clientId)
      throw new BrokerRefused(`${idp.name} sent an ID token that is not valid for this sign-in.`)
    if (typeof payload.nonce !== 'string' || !safeEqual(payload.nonce, nonce))
      throw new BrokerRefused(`${idp.name} sent an ID token for another sign-in (nonce). Start again.`)
    let claims: Record<string, unknown> = payload
    if (typeof payload.email !== 'string' && endpoints.userinfo && accessToken) {
      // Some IdPs keep the address out of the ID token: userinfo has it, for the same subject.
      const info = await this.json(
        idp,
        await this.fetch(idp, endpoints.userinfo, {
          headers: { accept: 'application/json', authorization: `Bearer ${accessToken}` },
        }),
      )
      if (info.sub === payload.sub)
        claims = { ...info, ...payload, email: info.email, email_verified: info.email_verified }
    }
    const verified =
      claims.email_verified === true || claims.email_verified === 'true' || claims.xms_edov === true
    const amr = Array.isArray(payload.amr) ? payload.amr.filter((v): v is string => AMR_VALUES.has(v)) : []
    return {
      subject: String(payload.sub),
      email: typeof claims.email === 'string' ? claims.email : null,
      emailVerified: verified,
      name: typeof claims.name === 'string' ? claims.name : '',
      amr,
    }
  }

  /** GitHub (OAuth 2.0): the user and their verified primary address, from its API. */
  private async githubUser(
    idp: ExternalIdp,
    endpoints: Endpoints,
    accessToken: string | null,
  ): Promise<ExternalIdentity> {
    if (!accessToken) throw new BrokerRefused(`${idp.name} did not accept this sign-in. Start again.`)
    const headers = {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${accessToken}`,
      'user-agent': 'Gatehouse',
    }
    const userRes = await this.fetch(idp, `${endpoints.api}/user`, { headers })
    const user = await this.json(idp, userRes)
    if (userRes.status !== 200 || (typeof user.id !== 'number' && typeof user.id !== 'string'))
      throw new BrokerRefused(`${idp.name} did not say who signed in.`, 502)
    const emailsRes = await this.fetch(idp, `${endpoints.api}/user/emails`, { headers })
    const emails = await readJson(emailsRes)
    const list = Array.isArray(emails)
      ? (emails as { email?: unknown; primary?: unknown; verified?: unknown }[])
      : []
    const verified = list.filter((e) => e.verified === true && typeof e.email === 'string')
    const chosen = verified.find((e) => e.primary === true) ?? verified[0]
    if (!chosen)
      throw new BrokerRefused(
        `Your ${idp.name} account has no verified email address. Verify one at ${idp.name}, then sign in again.`,
        403,
      )
    const name =
      typeof user.name === 'string' && user.name
        ? user.name
        : typeof user.login === 'string'
          ? user.login
          : ''
    return { subject: String(user.id), email: String(chosen.email), emailVerified: true, name, amr: [] }
  }
}
