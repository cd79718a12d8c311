// The baseline of the client-credentials scenario: a bare oidc-provider on node:http, with the
// default in-memory adapter, one static client and JWT (RFC 9068) access tokens signed with ES256,
// as Gatehouse signs them. No Gatehouse code. The client comes from BENCH_CLIENT_ID/BENCH_CLIENT_SECRET.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'

// oidc-provider warns on any runtime but Node.js LTS when it loads, and about the in-memory adapter
// this baseline uses on purpose; keep stderr for real problems.
const EXPECTED = [
  'oidc-provider WARNING: Unsupported runtime',
  'oidc-provider WARNING: a quick start development-only in-memory adapter',
]
const warn = console.warn
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && EXPECTED.some((w) => (args[0] as string).startsWith(w))) return
  warn(...args)
}
const { default: Provider } = await import('oidc-provider')

const clientId = process.env.BENCH_CLIENT_ID ?? 'bench-client'
const clientSecret = process.env.BENCH_CLIENT_SECRET ?? 'bench-secret-bench-secret-bench-secret'
const audience = 'https://api.example'

const { privateKey } = await generateKeyPair('ES256', { extractable: true })
const jwk = { ...(await exportJWK(privateKey)), kid: 'es256-bench', alg: 'ES256', use: 'sig' }

const server = createServer()
// Idle connections stay open as Bun.serve's do: alternate.ts leaves a side idle between its windows.
server.keepAliveTimeout = 60_000
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: ['https://rp.example/cb'],
      response_types: [],
      // The only key is EC: without this the client's RS256 default fails validation.
      id_token_signed_response_alg: 'ES256',
    },
  ],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      getResourceServerInfo: () => ({
        scope: '',
        audience,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
      useGrantedResource: () => true,
    },
  },
  jwks: { keys: [jwk as never] },
})
server.on('request', provider.callback())
console.log(JSON.stringify({ msg: 'listening', url: issuer }))
// A clean exit on the bench's SIGTERM, so that `--cpu-prof` (BENCH_CPU_PROF) writes its profile.
process.on('SIGTERM', () => process.exit(0))
