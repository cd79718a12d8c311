// Fixtures for the scenarios: a free loopback port, an active workspace with its instance keys and
// confidential (`web`) apps, password accounts of a workspace instance, and a dashboard session of
// a platform account, written straight into the store of a running server (the same shape
// provisioning, sign-in and tests/support leave behind), SQLite or PostgreSQL: the store the
// server's env names. This process's tables are declared for one dialect when it starts
// (src/db/columns.ts), so a bench that drives servers of the other dialect seeds them through
// seed.ts in a child process started with the server's env.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportJWK, generateKeyPair } from 'jose'
import { loadConfig } from '../../src/config'
import { type Core, createCore } from '../../src/core'
import { migrate } from '../../src/db/client'
import { createSession, sessionCookieName } from '../../src/features/auth/sessions'
import { ensureInstanceKeys, issuerFor, PLATFORM, signUp } from '../../src/identity'
import { instanceKeys, instanceSecrets } from '../../src/identity/schema'
import { randomToken, sha256Hex } from '../../src/shared/crypto'
import { newId, newWorkspaceId } from '../../src/shared/ids'
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
 * (RATE_LIMIT_* of this process's environment winning). Its master key is fresh and known to this
 * process too: it seals the instance keys it seeds into the same store.
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

/** Opens the store of the server started with `env` (same DATA_DIR and SECRET_KEY), runs `fn`, closes it. */
async function withStore<T>(env: Record<string, string | undefined>, fn: (core: Core) => Promise<T> | T) {
  const config = loadConfig(env)
  const core = createCore(config, { log: createLogger('error') })
  try {
    return await fn(core)
  } finally {
    await core.store.close()
  }
}

/**
 * Creates an active workspace, its instance keys and `apps` `web` apps (default 1) in the database of
 * the server started with `env` (which must carry the same DATA_DIR and SECRET_KEY: the keys are
 * sealed with it). `ownerId` defaults to an account that does not exist (the identity-plane
 * scenarios never look at the owner); pass a BenchSession's account to reach it through the API.
 */
export function seedWorkspace(
  env: Record<string, string | undefined>,
  opts: { ownerId?: string; apps?: number; redirectUri?: string } = {},
): Promise<BenchWorkspace> {
  return withStore(env, async (core) => {
    const workspaceId = newWorkspaceId()
    const now = core.clock.now()
    // Plain SQL naming only the columns set here, so columns added later (with defaults) need no change.
    await core.store.exec(
      `INSERT INTO workspaces (id, name, owner_id, state, created_at, updated_at)
       VALUES ($1, 'Bench', $2, 'active', $3, $3)`,
      [workspaceId, opts.ownerId ?? 'usr_bench', now],
    )
    await core.store.exec(
      `INSERT INTO workspace_members (workspace_id, account_id, role, created_at, updated_at)
       VALUES ($1, $2, 'owner', $3, $3)`,
      [workspaceId, opts.ownerId ?? 'usr_bench', now],
    )
    await ensureInstanceKeys(core, workspaceId)
    const credentials: { clientId: string; clientSecret: string }[] = []
    for (let i = 1; i <= (opts.apps ?? 1); i++) {
      const clientId = randomToken(16)
      const clientSecret = randomToken(32)
      await core.store.exec(
        `INSERT INTO apps (id, workspace_id, name, client_id, client_secret_hash, app_type, redirect_uris,
           post_logout_redirect_uris, dev_mode, extra_grants, created_at)
         VALUES ($1, $2, $3, $4, $5, 'web', $6, '[]', FALSE, '[]', $7)`,
        [
          newId('app'),
          workspaceId,
          `bench web app ${i}`,
          clientId,
          sha256Hex(clientSecret),
          JSON.stringify([opts.redirectUri ?? 'https://rp.example/cb']),
          now,
        ],
      )
      credentials.push({ clientId, clientSecret })
    }
    const first = credentials[0]
    if (!first) throw new Error('seedWorkspace needs at least one app')
    return { workspaceId, issuer: issuerFor(core.config, workspaceId), ...first }
  })
}

export interface BenchSession {
  accountId: string
  /** The whole `Cookie` header value: `gh_session=…` (`__Host-gh_session=…` for an https BASE_URL). */
  cookie: string
  /** For the `X-CSRF-Token` header of unsafe methods. */
  csrfToken: string
}

/**
 * Creates a platform account (no password: nobody signs in with it) and a dashboard session for it,
 * exactly as the sign-in callback does (createSession), in the store of the server started with `env`.
 */
export function seedSession(env: Record<string, string | undefined>): Promise<BenchSession> {
  return withStore(env, async (core) => {
    const now = core.clock.now()
    const accountId = newId('usr', now)
    await core.store.exec(
      `INSERT INTO accounts (id, instance_id, email, name, email_verified, created_at, updated_at)
       VALUES ($1, $2, $3, 'Bench', TRUE, $4, $4)`,
      [accountId, PLATFORM, `${accountId.toLowerCase()}@bench.invalid`, now],
    )
    const { cookie, csrfToken } = await createSession(core, accountId, null)
    return { accountId, cookie: `${sessionCookieName(core)}=${cookie}`, csrfToken }
  })
}

/**
 * The hash the product stores for `password`: made by its own sign-up (`signUp`, which hashes with
 * the product's argon2id parameters) in a throwaway SQLite store, and read back. So a bench that
 * seeds accounts with it, and times verifies of it, uses exactly the hash a real account would carry.
 */
export async function productPasswordHash(password: string): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-hash-'))
  try {
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', SECRET_KEY: randomBytes(32).toString('hex') }
    return await withStore(env, async (core) => {
      await migrate(core.store)
      const account = await signUp(core, PLATFORM, { email: 'hash@bench.invalid', password })
      if (!account.passwordHash) throw new Error('signUp stored no password hash')
      return account.passwordHash
    })
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/**
 * Creates `count` end-user accounts of the instance `instanceId` (a workspace id), email verified,
 * all carrying `passwordHash` (see productPasswordHash), in the store of the server started with
 * `env`; returns their emails (`user-<n>@bench.invalid`, n from 0).
 */
export function seedAccounts(
  env: Record<string, string | undefined>,
  instanceId: string,
  count: number,
  passwordHash: string,
): Promise<string[]> {
  return withStore(env, async (core) => {
    const now = core.clock.now()
    const emails: string[] = []
    for (let i = 0; i < count; i++) {
      const email = `user-${i}@bench.invalid`
      await core.store.exec(
        `INSERT INTO accounts (id, instance_id, email, name, email_verified, password_hash, created_at, updated_at)
         VALUES ($1, $2, $3, $4, TRUE, $5, $6, $6)`,
        [newId('usr', now), instanceId, email, `Bench user ${i}`, passwordHash, now],
      )
      emails.push(email)
    }
    return emails
  })
}

/** `Authorization: Basic …` for client_secret_basic (RFC 6749 §2.3.1: form-encode, then base64). */
export const basicAuth = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`

/**
 * Seeds `count` active workspaces, each with its instance keys (RS256 + ES256, sealed per kid as
 * ensureInstanceKeys seals them), its cookie keys and one `web` app whose secret is `secret`, in
 * the store of the server started with `env`, in transactions of `batch` workspaces: fast enough
 * for 10,000 (the memory scenario) without 10,000 HTTP creations. Every ES256 key and every cookie
 * key is its own; RSA-2048 generation (tens of ms a key) would dominate, so the RS256 keys come
 * from `rsaKeys` distinct pairs made here, each stored under a kid of its own for every workspace
 * that uses it. A Provider imports its key material from its own rows, so sharing RSA pairs between
 * workspaces changes neither the memory nor the work of a node (never do it in production).
 */
export function seedWorkspaces(
  env: Record<string, string | undefined>,
  count: number,
  opts: { secret: string; rsaKeys?: number; batch?: number },
): Promise<BenchWorkspace[]> {
  return withStore(env, async (core) => {
    const now = core.clock.now()
    const rsa = await Promise.all(
      Array.from({ length: opts.rsaKeys ?? 16 }, async () => {
        const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
        return { publicJwk: await exportJWK(publicKey), privateJwk: await exportJWK(privateKey) }
      }),
    )
    const secretHash = sha256Hex(opts.secret)
    const out: BenchWorkspace[] = []
    const batch = opts.batch ?? 500
    for (let start = 0; start < count; start += batch) {
      const made = await Promise.all(
        Array.from({ length: Math.min(batch, count - start) }, async (_, j) => {
          const workspaceId = newWorkspaceId()
          const ec = await generateKeyPair('ES256', { extractable: true })
          const pairs = [
            { alg: 'RS256', ...(rsa[(start + j) % rsa.length] as (typeof rsa)[number]) },
            {
              alg: 'ES256',
              publicJwk: await exportJWK(ec.publicKey),
              privateJwk: await exportJWK(ec.privateKey),
            },
          ]
          const keys = pairs.map(({ alg, publicJwk, privateJwk }) => {
            const kid = `${alg.toLowerCase()}-${randomBytes(8).toString('hex')}`
            return {
              kid,
              alg,
              publicJwk: JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' }),
              sealed: core.secrets.seal(
                JSON.stringify({ ...privateJwk, kid, alg, use: 'sig' }),
                `instance-key:${kid}`,
              ),
            }
          })
          const cookieKeys = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')]
          return {
            workspaceId,
            keys,
            cookieKeysSealed: core.secrets.seal(JSON.stringify(cookieKeys), `cookie-keys:${workspaceId}`),
            clientId: randomToken(16),
          }
        }),
      )
      await core.store.tx(async (tx) => {
        for (const w of made) {
          await tx.exec(
            `INSERT INTO workspaces (id, name, owner_id, state, created_at, updated_at)
             VALUES ($1, 'Bench', 'usr_bench', 'active', $2, $2)`,
            [w.workspaceId, now],
          )
          await tx.exec(
            `INSERT INTO workspace_members (workspace_id, account_id, role, created_at, updated_at)
             VALUES ($1, 'usr_bench', 'owner', $2, $2)`,
            [w.workspaceId, now],
          )
          await tx.db.insert(instanceKeys).values(
            w.keys.map((k) => ({
              kid: k.kid,
              instanceId: w.workspaceId,
              alg: k.alg,
              publicJwk: JSON.parse(k.publicJwk) as JsonWebKey,
              privateJwkSealed: k.sealed,
              createdAt: now,
            })),
          )
          await tx.db
            .insert(instanceSecrets)
            .values({ instanceId: w.workspaceId, cookieKeysSealed: w.cookieKeysSealed, createdAt: now })
          await tx.exec(
            `INSERT INTO apps (id, workspace_id, name, client_id, client_secret_hash, app_type, redirect_uris,
               post_logout_redirect_uris, dev_mode, extra_grants, created_at)
             VALUES ($1, $2, 'bench web app', $3, $4, 'web', $5, '[]', FALSE, '[]', $6)`,
            [
              newId('app'),
              w.workspaceId,
              w.clientId,
              secretHash,
              JSON.stringify(['https://rp.example/cb']),
              now,
            ],
          )
        }
      })
      for (const w of made)
        out.push({
          workspaceId: w.workspaceId,
          issuer: issuerFor(core.config, w.workspaceId),
          clientId: w.clientId,
          clientSecret: opts.secret,
        })
    }
    return out
  })
}
