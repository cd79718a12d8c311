// What the scenarios share: a free loopback port, the environment of a bench server, the shapes of
// the fixtures (made through the server's public API: api.ts), and the hash the product makes of a
// password, for the sign-in scenario's bound.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { createCore } from '../../src/core'
import { migrate } from '../../src/db/client'
import { PLATFORM, signUp } from '../../src/identity'
import { createLogger } from '../../src/shared/logger'
import { freePort } from '../free-port'

export { freePort }

/**
 * The rate limits of bench servers: on, so the limiter's work on every request (its bucket upserts)
 * is part of what is measured, as a deployment pays it, but at their configurable maxima, which no
 * scenario reaches (1,000,000 a minute is 16,667/s on one workspace or address). RATE_LIMIT_* in
 * this process's environment win (e.g. 0: off, to see what the limiter costs).
 */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000',
  RATE_LIMIT_ORGANISATION_PER_MINUTE: '10000000',
  RATE_LIMIT_ADDRESS_PER_MINUTE: '1000000',
  RATE_LIMIT_BATCH_PER_MINUTE: '1000000',
  RATE_LIMIT_DATA_PLANE_RPS: '1000000',
  RATE_LIMIT_DATA_PLANE_BURST: '10000000',
}

/**
 * The headers a bare baseline answers with the bytes of a discovery or JWKS answer: the ones
 * oidc-provider itself answers with them (the representation, and the CORS header it sets on both
 * documents). What Gatehouse adds to them (the plane's security headers, the request id) and does
 * for them (the access log) is what the discovery and jwks ratios measure. One list for the bench
 * and alternate.ts: until 2026-12-03 the bench left the CORS header out, alternate.ts and
 * cached-answer-floor.ts kept it.
 */
export const LIBRARY_HEADERS = ['content-type', 'cache-control', 'access-control-allow-origin']

/** The pairs of `headers` a bare baseline answers too (LIBRARY_HEADERS). */
export const libraryHeaders = (headers: Headers): [string, string][] =>
  [...headers].filter(([name]) => LIBRARY_HEADERS.includes(name))

/**
 * The environment of a bench's Gatehouse on port `port` of 127.0.0.1, its state in `dataDir` (SQLite
 * unless the caller gives DATABASE_URL: never the environment's own), with the bench's rate limits
 * (RATE_LIMIT_* of this process's environment winning) and a fresh master key.
 */
export function benchServerEnv(dataDir: string, port: number, logLevel: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: logLevel,
    ...Object.fromEntries(Object.entries(BENCH_RATE_LIMITS).map(([k, v]) => [k, process.env[k] ?? v])),
    DATABASE_URL: '',
  }
}

export interface BenchWorkspace {
  workspaceId: string
  issuer: string
  /** Credentials of the first app. */
  clientId: string
  clientSecret: string
}

export interface BenchSession {
  accountId: string
  /** The whole `Cookie` header value: `gh_session=…` (`__Host-gh_session=…` for an https BASE_URL). */
  cookie: string
  /** For the `X-CSRF-Token` header of unsafe methods. */
  csrfToken: string
}

/**
 * The hash the product stores for `password`: made by its own sign-up (`signUp`, which hashes with
 * the product's argon2id parameters) in a throwaway SQLite store, and read back. The sign-in
 * scenario's accounts, signed up on the hosted pages with that password, carry hashes made alike
 * (their own salts), so its bound times verifies of exactly what a sign-in verifies.
 */
export async function productPasswordHash(password: string): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-hash-'))
  const env = { DATA_DIR: dataDir, DATABASE_URL: '', SECRET_KEY: randomBytes(32).toString('hex') }
  const core = createCore(loadConfig(env), { log: createLogger('error') })
  try {
    await migrate(core.store)
    const account = await signUp(core, PLATFORM, { email: 'hash@bench.invalid', password })
    if (!account.passwordHash) throw new Error('signUp stored no password hash')
    return account.passwordHash
  } finally {
    await core.store.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** `Authorization: Basic …` for client_secret_basic (RFC 6749 §2.3.1: form-encode, then base64). */
export const basicAuth = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`
