// The baseline of the machine-key-exchange scenario: the floor of an RFC 7523 jwt-bearer exchange,
// with no Gatehouse code (no framework, store or access log). A bare Bun.serve handler on
// POST /v1/auth/token that reads the form, verifies the ES256 assertion with jose against the one
// key it was started with (BENCH_KEY_ID, BENCH_PUBLIC_JWK) with the claims the product checks (iss =
// sub = the key id, aud = this URL's token endpoint, exp, iat and jti required, the hour's limit),
// refuses a jti seen before (in memory), and answers an ES256 access token signed with jose carrying
// the product's claims. What any implementation of the exchange must spend: HTTP, two ES256 operations.
import { decodeProtectedHeader, generateKeyPair, importJWK, type JWK, jwtVerify, SignJWT } from 'jose'

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer'
const keyId = process.env.BENCH_KEY_ID
const publicJwk = process.env.BENCH_PUBLIC_JWK
if (!keyId || !publicJwk) {
  console.error('baseline-machine-exchange.ts needs BENCH_KEY_ID and BENCH_PUBLIC_JWK')
  process.exit(2)
}
const holderKey = await importJWK(JSON.parse(publicJwk) as JWK, 'ES256')
const { privateKey: signingKey } = await generateKeyPair('ES256')
const spent = new Set<string>()
/** This server's origin, the issuer of its tokens; its token endpoint is the assertions' audience. */
let origin = ''
let tokenUrl = ''

const invalidGrant = (description: string) =>
  Response.json({ error: 'invalid_grant', error_description: description }, { status: 400 })

const server = Bun.serve({
  port: 0,
  reusePort: false,
  async fetch(req) {
    if (req.method !== 'POST' || new URL(req.url).pathname !== '/v1/auth/token')
      return new Response('not found', { status: 404 })
    const form = new URLSearchParams(await req.text())
    const assertion = form.get('assertion')
    if (form.get('grant_type') !== JWT_BEARER || !assertion)
      return Response.json({ error: 'invalid_request' }, { status: 400 })
    let payload: { exp?: number; iat?: number; jti?: unknown }
    try {
      if (decodeProtectedHeader(assertion).kid !== keyId) return invalidGrant('Unknown key')
      ;({ payload } = await jwtVerify(assertion, holderKey, {
        algorithms: ['ES256'],
        issuer: keyId,
        subject: keyId,
        audience: tokenUrl,
        requiredClaims: ['exp', 'iat', 'jti'],
        clockTolerance: 60,
      }))
    } catch {
      return invalidGrant('The assertion signature or claims are not valid')
    }
    if (payload.exp! - payload.iat! > 3600 || typeof payload.jti !== 'string')
      return invalidGrant('The assertion is not valid')
    if (spent.has(payload.jti)) return invalidGrant('This assertion was used already (jti)')
    spent.add(payload.jti)
    const now = Math.floor(Date.now() / 1000)
    const accessToken = await new SignJWT({
      workspace_id: 'bench',
      scope: 'workspace:read',
      client_id: keyId,
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'es256-bench' })
      .setIssuer(origin)
      .setAudience(`${origin}/v1`)
      .setSubject(`key:${keyId}`)
      .setIssuedAt(now)
      .setExpirationTime(now + 900)
      .setJti(crypto.randomUUID())
      .sign(signingKey)
    return Response.json(
      { access_token: accessToken, token_type: 'Bearer', expires_in: 900, scope: 'workspace:read' },
      { headers: { 'cache-control': 'no-store', pragma: 'no-cache' } },
    )
  },
})
origin = `http://127.0.0.1:${server.port}`
tokenUrl = `${origin}/v1/auth/token`
console.log(JSON.stringify({ msg: 'listening', url: origin }))
