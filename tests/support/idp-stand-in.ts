import { createHash, randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'

/** Who the stand-in says signed in next, and how it misbehaves (a test of each refusal). */
export interface StandInUser {
  sub: string
  email: string
  emailVerified?: boolean
  name?: string
  amr?: string[]
  /** GitHub's address list; by default the email, verified and primary. */
  githubEmails?: { email: string; primary: boolean; verified: boolean }[]
  /** Signs the ID token with this nonce instead of the request's. */
  nonce?: string
  /** Issues the ID token to this audience instead of the client. */
  audience?: string
  /** Names this issuer in the authorization response (RFC 9207) instead of itself. */
  iss?: string
}

export interface AuthorizeRequest {
  params: URLSearchParams
}

/**
 * A small OAuth 2.0 / OpenID Connect provider for the tests of sign-in through external IdPs: it
 * plays Google (ID token, `email_verified`), Microsoft (tenant issuer), GitHub (`/user`,
 * `/user/emails`) and a generic issuer (discovery), approving each authorization request at once
 * as `next` user. It checks what a real one checks: the client's credentials, the code (single
 * use), the redirect URI and the PKCE verifier.
 */
export async function startIdpStandIn(clientId: string, clientSecret: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'stand-in-1', alg: 'ES256', use: 'sig' }
  const codes = new Map<string, { params: URLSearchParams; user: StandInUser }>()
  const tokens = new Map<string, StandInUser>()
  const state = {
    next: { sub: 'u-1', email: 'ada@example.com' } as StandInUser,
    authorizeRequests: [] as AuthorizeRequest[],
    tokenRequests: 0,
    /** Microsoft's `tid` when the stand-in plays it. */
    tenant: '9188040d-6c67-4c5b-b112-36a304b66dad',
  }
  let base = ''
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req): Promise<Response> {
      const url = new URL(req.url)
      // An issuer whose discovery document never ends (a provider that streams without stopping).
      if (url.pathname === '/big/.well-known/openid-configuration') {
        const filler = 'x'.repeat(1024)
        let sent = 0
        const stream = new ReadableStream({
          pull(c) {
            if (sent++ > 1024) return c.close()
            c.enqueue(new TextEncoder().encode(sent === 1 ? `{"issuer":"${base}/big","pad":"` : filler))
          },
        })
        return new Response(stream, { headers: { 'content-type': 'application/json' } })
      }
      if (url.pathname === '/.well-known/openid-configuration') {
        return Response.json({
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          jwks_uri: `${base}/jwks`,
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          authorization_response_iss_parameter_supported: true,
        })
      }
      if (url.pathname === '/jwks') return Response.json({ keys: [jwk] })
      if (url.pathname === '/authorize') {
        state.authorizeRequests.push({ params: url.searchParams })
        const code = randomBytes(16).toString('hex')
        codes.set(code, { params: url.searchParams, user: state.next })
        const back = new URL(url.searchParams.get('redirect_uri')!)
        back.searchParams.set('code', code)
        back.searchParams.set('state', url.searchParams.get('state') ?? '')
        back.searchParams.set('iss', state.next.iss ?? base)
        return Response.redirect(back.href, 302)
      }
      if ((url.pathname === '/token' || url.pathname === '/ms/token') && req.method === 'POST') {
        state.tokenRequests++
        const form = new URLSearchParams(await req.text())
        const basic = req.headers.get('authorization')?.replace(/^Basic /, '')
        const [id, secret] = basic
          ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent)
          : [form.get('client_id'), form.get('client_secret')]
        if (id !== clientId || secret !== clientSecret)
          return Response.json({ error: 'invalid_client' }, { status: 401 })
        const issued = codes.get(form.get('code') ?? '')
        codes.delete(form.get('code') ?? '')
        if (!issued) return Response.json({ error: 'invalid_grant' }, { status: 400 })
        const challenge = createHash('sha256')
          .update(form.get('code_verifier') ?? '')
          .digest('base64url')
        if (
          issued.params.get('redirect_uri') !== form.get('redirect_uri') ||
          issued.params.get('code_challenge') !== challenge ||
          issued.params.get('code_challenge_method') !== 'S256'
        )
          return Response.json({ error: 'invalid_grant' }, { status: 400 })
        const user = issued.user
        const accessToken = randomBytes(16).toString('hex')
        tokens.set(accessToken, user)
        const issuer = url.pathname === '/ms/token' ? `${base}/${state.tenant}/v2.0` : base
        const idToken = await new SignJWT({
          email: user.email,
          email_verified: user.emailVerified ?? true,
          name: user.name ?? 'Ada Lovelace',
          ...(user.amr ? { amr: user.amr } : {}),
          nonce: user.nonce ?? issued.params.get('nonce') ?? undefined,
          tid: state.tenant,
        })
          .setProtectedHeader({ alg: 'ES256', kid: 'stand-in-1' })
          .setIssuer(issuer)
          .setSubject(user.sub)
          .setAudience(user.audience ?? clientId)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey)
        return Response.json({ access_token: accessToken, token_type: 'Bearer', id_token: idToken })
      }
      const user = tokens.get(req.headers.get('authorization')?.replace(/^Bearer /, '') ?? '')
      if (url.pathname === '/user') {
        if (!user) return Response.json({ message: 'Bad credentials' }, { status: 401 })
        return Response.json({
          id: Number(user.sub.replace(/\D/g, '')) || 42,
          login: 'ada',
          name: user.name ?? null,
        })
      }
      if (url.pathname === '/user/emails') {
        if (!user) return Response.json({ message: 'Bad credentials' }, { status: 401 })
        return Response.json(user.githubEmails ?? [{ email: user.email, primary: true, verified: true }])
      }
      return new Response('not found', { status: 404 })
    },
  })
  base = `http://127.0.0.1:${server.port}`
  return {
    base,
    state,
    /** `IDP_ENDPOINTS` pointing every named provider here. */
    endpoints: JSON.stringify({
      google: {
        issuer: base,
        authorization: `${base}/authorize`,
        token: `${base}/token`,
        jwks: `${base}/jwks`,
      },
      microsoft: {
        issuer: `${base}/{tenantid}/v2.0`,
        authorization: `${base}/authorize`,
        token: `${base}/ms/token`,
        jwks: `${base}/jwks`,
      },
      github: { authorization: `${base}/authorize`, token: `${base}/token`, api: base },
    }),
    stop: () => server.stop(true),
  }
}
