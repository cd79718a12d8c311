// `client-credentials`: POST {issuer}/token grant_type=client_credentials (client_secret_basic, JWT
// access tokens signed ES256) for a web app of a workspace vs the same grant on a bare oidc-provider
// (servers/oidc.ts: node:http, in-memory adapter). `client-credentials-postgres`: the same grant on
// a node on PostgreSQL vs a node on SQLite. Every answer must carry an ES256 JWT access token.
import { randomBytes } from 'node:crypto'
import { gatehouseWithWorkspace } from '../fixtures'
import { expectAccessToken } from '../load'
import { startServerScript } from '../process'
import { httpSide, type SideSpec, throughput } from '../scenario'
import { basicAuth } from '../setup'

const checkToken = expectAccessToken('ES256')

/** POST /token with client credentials, a fresh Request each time. */
export const tokenRequest = (tokenUrl: string, clientId: string, clientSecret: string) => {
  const authorization = basicAuth(clientId, clientSecret)
  return () =>
    new Request(tokenUrl, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    })
}

export const bareOidcProvider: SideSpec = {
  name: 'bare oidc-provider',
  async start(opts) {
    const clientId = 'bench-client'
    const clientSecret = randomBytes(32).toString('base64url')
    const s = await startServerScript('oidc.ts', {
      BENCH_CLIENT_ID: clientId,
      BENCH_CLIENT_SECRET: clientSecret,
    })
    return httpSide(this.name, s, tokenRequest(`${s.url}/token`, clientId, clientSecret), checkToken, opts)
  },
}

const gatehouseTokens = (name: string, store: 'sqlite' | 'postgres'): SideSpec => ({
  name,
  async start(opts) {
    const { gh, ws, url, databasePid } = await gatehouseWithWorkspace(opts, '/token', { store })
    return httpSide(
      name,
      { ...gh, databasePid },
      tokenRequest(url, ws.clientId, ws.clientSecret),
      checkToken,
      opts,
    )
  },
})

export const clientCredentials = throughput({
  description:
    'POST {issuer}/token grant_type=client_credentials (client_secret_basic, JWT/ES256 access tokens) for a web app of a workspace instance vs the same grant on a bare oidc-provider (node:http, in-memory adapter)',
  minRate: 2_000,
  // Issue 59 "Must hold": at least 0.9 of the library itself on the same grant.
  minRatio: 0.9,
  baseline: bareOidcProvider,
  subject: gatehouseTokens('gatehouse: client-credentials', 'sqlite'),
})

export const clientCredentialsPostgres = throughput({
  description:
    "the client-credentials grant on a node on PostgreSQL (a fresh database of a throwaway local cluster, fsync off; the database's CPU counted as the server's) vs the same on a node on SQLite, same fixtures and env",
  minRatio: 0.7,
  baseline: gatehouseTokens('gatehouse on SQLite', 'sqlite'),
  subject: gatehouseTokens('gatehouse on PostgreSQL', 'postgres'),
})
