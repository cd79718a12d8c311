// SPIKE, not wired into the product: can ONE oidc-provider 9.13 Provider serve many issuers, the
// instance taken per request from AsyncLocalStorage? (README "Performance", last paragraph;
// notes/shared-provider-spike.md has the findings.)
//
// `bun scripts/bench/shared-provider-spike.ts [--instances N] [--seconds S] [--connections C]`
//
// Seeds N active workspaces into a temp SQLite store exactly as the `memory` bench does
// (scripts/bench/setup.ts seedWorkspaces: own ES256 key and cookie keys each, RS256 from 16 pairs under
// kids of their own, one `web` app each, the same client secret for all: only instance scoping keeps
// one workspace's client out of another's token endpoint). Then, in this process, through the
// product's `inject` (the bridge's in-process hand-over, without Bun.serve, the bridge's cache or the
// limiter):
//   1. isolation: discovery, JWKS, client_credentials tokens verified with jose, cross-instance
//      client refused, signed cookies, a request outside any instance scope;
//   2. a cold instance's first token (keys loaded and opened on demand), shared vs a Provider build;
//   3. live heap per extra instance (bun:jsc heapStats after Bun.gc(true));
//   4. isolation again on a random sample of all N, 32 requests in flight;
//   5. tokens at random over all N vs on one, shared vs the current pool of 500 Providers.

import { heapStats } from 'bun:jsc'
import { AsyncLocalStorage } from 'node:async_hooks'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose'
import Provider, { type Configuration } from 'oidc-provider'
import KeyStore from 'oidc-provider/lib/helpers/keystore.js'
import LRU from 'oidc-provider/lib/helpers/lru.js'
import internals from 'oidc-provider/lib/helpers/weak_cache.js'
import { loadConfig } from '../../src/config'
import { createCore } from '../../src/core'
import { migrate } from '../../src/db/client'
import { appClientSource } from '../../src/features/apps/client-source'
import { clientMetadata } from '../../src/identity/clients'
import { inject, type NodeHandler } from '../../src/identity/inject'
import { loadInstanceKeys } from '../../src/identity/keys'
import { HASHED_PREFIX } from '../../src/identity/payload-keys'
import { DEFAULT_LOGIN_POLICY } from '../../src/identity/policy'
import { buildProvider } from '../../src/identity/provider'
import { accountFinder } from '../../src/identity/provider/claims'
import { providerConfiguration } from '../../src/identity/provider/configuration'
import { handleProviderErrors } from '../../src/identity/provider/error-events'
import { SCOPES } from '../../src/identity/provider/resources'
import { deriveKey, keyedHash, safeEqual, sha256Hex } from '../../src/shared/crypto'
import { createLogger } from '../../src/shared/logger'
import { seedWorkspaces } from './setup'

const argv = process.argv.slice(2)
const arg = (name: string, def: number) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? Number(argv[i + 1]) : def
}
const N = arg('instances', 10_000)
const SECONDS = arg('seconds', 5)
const CONNECTIONS = arg('connections', 32)
const COLD = arg('cold', 300)
const BASE = 'http://127.0.0.1:1'

// ---------------------------------------------------------------------------------------------
// Store and workspaces, as the memory bench seeds them.
const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-shared-spike-'))
const env = {
  DATA_DIR: dataDir,
  DATABASE_URL: '',
  SECRET_KEY: randomBytes(32).toString('hex'),
  BASE_URL: BASE,
}
const core = createCore(loadConfig(env), { log: createLogger('error') })
await migrate(core.store)
const secret = randomBytes(24).toString('base64url')
const t = performance.now()
const workspaces = await seedWorkspaces(env, N + 4 * COLD, { secret })
console.log(`seeded ${workspaces.length} workspaces in ${((performance.now() - t) / 1000).toFixed(1)} s`)
const source = appClientSource(core)
const basic = (id: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

// ---------------------------------------------------------------------------------------------
// The per-request instance: everything of an instance the shared Provider reads.
interface InstanceRecord {
  id: string
  issuer: string
  prefix: string
  /** oidc-provider's KeyStore over the instance's private JWKs (what `#int.keystore` holds). */
  keystore: KeyStore
  /** The public JWKS oidc-provider's jwks endpoint answers (what `#int.jwks` holds). */
  jwks: { keys: Record<string, unknown>[] }
  cookieKeys: string[]
}

const als = new AsyncLocalStorage<InstanceRecord>()
/** The instance of this request; never a default: outside a scope the Provider must fail closed. */
const cur = (): InstanceRecord => {
  const s = als.getStore()
  if (!s) throw new Error('shared provider used outside an instance scope')
  return s
}

const SHAPE_ALGS = 'ES256,RS256'
/** As initialize_keystore.js registers a key and derives the public JWKS (the checks it makes are elided). */
function recordOf(id: string, keys: { jwks: { keys: Record<string, unknown>[] }; cookieKeys: string[] }) {
  const keystore = new KeyStore()
  const algs = new Set<string>()
  for (const jwk of keys.jwks.keys) {
    algs.add(String(jwk.alg))
    keystore.add(structuredClone(jwk))
  }
  // The algs of the keys are part of the configuration shape (registerKey narrows the signing alg
  // lists of the configuration by them, once, at construction).
  if ([...algs].sort().join(',') !== SHAPE_ALGS) throw new Error(`instance ${id}: algs ${[...algs]}`)
  const pub = [...keystore].map((k) => ({
    kty: k.kty,
    use: k.use,
    kid: k.kid,
    alg: k.alg,
    crv: k.crv,
    e: k.e,
    n: k.n,
    x: k.x,
    y: k.y,
  }))
  const prefix = `/i/${id}`
  return {
    id,
    issuer: `${BASE}${prefix}`,
    prefix,
    keystore,
    jwks: { keys: pub },
    cookieKeys: keys.cookieKeys,
  }
}

/** Instance records, loaded on demand (one read of the key rows, opened) and kept in an LRU. */
class Records {
  private readonly held = new Map<string, InstanceRecord>()
  private readonly loading = new Map<string, Promise<InstanceRecord>>()
  constructor(public max: number) {}
  get(id: string): InstanceRecord | Promise<InstanceRecord> {
    const hit = this.held.get(id)
    if (hit) return hit
    let p = this.loading.get(id)
    if (!p) {
      p = loadInstanceKeys(core, id).then((keys) => {
        if (!keys) throw new Error(`no keys for ${id}`)
        const rec = recordOf(id, keys)
        this.loading.delete(id)
        if (this.held.size >= this.max) this.held.delete(this.held.keys().next().value as string)
        this.held.set(id, rec)
        return rec
      })
      this.loading.set(id, p)
    }
    return p
  }
  clear() {
    this.held.clear()
  }
  get size() {
    return this.held.size
  }
}

// ---------------------------------------------------------------------------------------------
// The shared client memo: ONE map for every instance, keyed by instance AND client id.
const MEMO_MS = 2_000
const clientMemo = new Map<string, { metadata: Readonly<Record<string, unknown>>; until: number }>()
const CLIENT_MEMO_MAX = 20_000
function findClient(instanceId: string, clientId: string) {
  const key = `${instanceId} ${clientId}`
  const now = Date.now()
  const hit = clientMemo.get(key)
  if (hit && hit.until > now) return hit.metadata
  return source.find(instanceId, clientId).then((c) => {
    if (!c) {
      clientMemo.delete(key)
      return undefined
    }
    const metadata = clientMetadata(c, true)
    if (clientMemo.size >= CLIENT_MEMO_MAX) clientMemo.delete(clientMemo.keys().next().value as string)
    clientMemo.set(key, { metadata, until: now + MEMO_MS })
    return metadata
  })
}

// The product's adapter, with the instance read per call instead of closed over. Its payload codec
// (payload-keys.ts) binds the instance only in its seal contexts: one hash key for all.
const hashKey = deriveKey(core.config.secretKey, 'oidc-payload-ids v1')
const idKey = (v: string) => `${HASHED_PREFIX}${keyedHash(hashKey, v)}`
class SharedAdapter {
  constructor(private readonly model: string) {}
  async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
    const { jti: _j, ...rest } = payload
    await core.store.exec(
      `INSERT INTO oidc_payloads (instance_id, model, id, payload, grant_id, user_code, uid, account_id, expires_at, consumed_at)
       VALUES ($1, $2, $3, $4, $5, NULL, $6, NULL, $7, NULL)
       ON CONFLICT (instance_id, model, id) DO UPDATE SET payload = excluded.payload, expires_at = excluded.expires_at`,
      [
        cur().id,
        this.model,
        idKey(id),
        JSON.stringify(rest),
        (payload.grantId as string) ?? null,
        (payload.uid as string) ?? null,
        expiresIn ? Date.now() + expiresIn * 1000 : null,
      ],
    )
  }
  async find(id: string) {
    if (this.model === 'Client') return findClient(cur().id, id)
    const [r] = await core.store.query<{ payload: string; expires_at: number | null }>(
      'SELECT payload, expires_at FROM oidc_payloads WHERE instance_id = $1 AND model = $2 AND id = $3',
      [cur().id, this.model, idKey(id)],
    )
    if (!r || (r.expires_at !== null && r.expires_at <= Date.now())) return undefined
    return { ...JSON.parse(r.payload), jti: id }
  }
  async findByUserCode() {
    return undefined
  }
  async findByUid() {
    return undefined
  }
  async consume() {}
  async destroy(id: string) {
    await core.store.exec('DELETE FROM oidc_payloads WHERE instance_id = $1 AND model = $2 AND id = $3', [
      cur().id,
      this.model,
      idKey(id),
    ])
  }
  async revokeByGrantId(grantId: string) {
    await core.store.exec('DELETE FROM oidc_payloads WHERE instance_id = $1 AND grant_id = $2', [
      cur().id,
      grantId,
    ])
  }
}

/**
 * The shared Provider: built once with throwaway template keys and a placeholder issuer, then every
 * per-issuer point redirected to the request's instance (AsyncLocalStorage), without patching the
 * library: own properties (issuer, keys, pathFor) and `#int` entries (keystore, jwks,
 * dynamicClients, cookies.long.path) reached through its weak_cache reader.
 */
async function buildShared() {
  const template = await Promise.all(
    (['RS256', 'ES256'] as const).map(async (alg) => {
      const { privateKey } = await generateKeyPair(alg, { extractable: true })
      return { ...(await exportJWK(privateKey)), alg, use: 'sig', kid: `template-${alg}` }
    }),
  )
  const placeholder = '00000000-0000-4000-8000-000000000000'
  const configuration = providerConfiguration(core, placeholder, {
    keys: { jwks: { keys: template }, cookieKeys: [randomBytes(32).toString('base64url')] },
    prefix: '/i/_shared',
    clients: source,
    policy: { ...DEFAULT_LOGIN_POLICY },
  }) as Configuration & Record<string, unknown>
  configuration.adapter = SharedAdapter as never
  configuration.findAccount = (ctx, sub, token) => accountFinder(core, cur().id, {})!(ctx, sub, token)
  configuration.extraTokenClaims = async () => undefined // platform-only in the product
  configuration.interactions!.url = (_ctx, i) => `${cur().prefix}/interaction/${i.uid}`
  // NOT done here (not exercised by this spike): interactions.policy (promptsFor binds the
  // instance id and the policy's mfa), ttl.Session (the policy's lifetime): both must read cur().
  configuration.features!.resourceIndicators = {
    enabled: true,
    defaultResource: async (ctx) =>
      ctx.oidc.params?.grant_type === 'client_credentials' ? cur().issuer : undefined,
    useGrantedResource: async () => true,
    getResourceServerInfo: async (_ctx, resource) => ({
      scope: SCOPES.join(' '),
      audience: resource,
      accessTokenTTL: 3600,
      accessTokenFormat: 'jwt' as const,
      jwt: { sign: { alg: 'ES256' as const } },
    }),
  }
  const provider = new Provider(`${BASE}/i/_shared`, configuration)
  provider.proxy = true
  handleProviderErrors(core, provider, 'shared')
  provider.Client.prototype.compareClientSecret = function (this: { clientSecret: string }, actual: string) {
    return safeEqual(this.clientSecret, sha256Hex(actual))
  }

  // --- per-issuer state, redirected to the request's instance ---
  // 1. this.issuer (discovery `issuer`, token `iss`, id_token, introspection, WWW-Authenticate realm,
  //    authorization response `iss`, client-assertion audience): an own data property → a getter.
  Object.defineProperty(provider, 'issuer', { get: () => cur().issuer, configurable: true, enumerable: true })
  // 2. Koa's app.keys (signed cookies): an own property → a getter.
  Object.defineProperty(provider, 'keys', {
    get: () => cur().cookieKeys,
    set: () => {},
    configurable: true,
  })
  // 3. pathFor/urlFor outside a request (provider.urlFor): #mountPath is the placeholder's path.
  //    Inside a request oidc-provider uses ctx.oidc.urlFor (originalUrl minus url, and ctx.href).
  const pathFor = Provider.prototype.pathFor
  provider.pathFor = function (this: Provider, name: string, opts: Record<string, unknown> = {}) {
    return pathFor.call(this, name, { mountPath: cur().prefix, ...opts })
  } as never
  const int = internals(provider)
  // 4. keystore (signing: JWT access tokens, id_token, userinfo/introspection JWTs) and 5. the JWKS
  //    endpoint's document: plain fields of #int, read per call → getters.
  Object.defineProperty(int, 'keystore', { get: () => cur().keystore, configurable: true })
  Object.defineProperty(int, 'jwks', { get: () => cur().jwks, configurable: true })
  // 6. Client objects cached by a hash of their metadata (100 entries, for every instance): scoped
  //    by instance as well, and sized for the instances served.
  const dyn = new LRU<string, unknown>({ maxSize: 20_000 })
  int.dynamicClients = {
    get: (k: string) => dyn.get(`${cur().id} ${k}`),
    set: (k: string, v: unknown) => dyn.set(`${cur().id} ${k}`, v),
    clear: () => dyn.clear(),
  }
  // 7. cookies.long.path: the instance's prefix (path-based instances share a host).
  Object.defineProperty(int.configuration.cookies.long, 'path', {
    get: () => cur().prefix || '/',
    enumerable: true,
    configurable: true,
  })
  if (int.staticClients) throw new Error('static clients would be shared by every instance')
  return { provider, callback: provider.callback(), dynamicClients: dyn }
}

// ---------------------------------------------------------------------------------------------
const shared = await buildShared()
const records = new Records(N + 10 * COLD)

type Handler = { issuer: string; prefix: string; handler: NodeHandler }
const sharedHandler = async (id: string): Promise<Handler> => {
  const r = await records.get(id)
  return {
    issuer: r.issuer,
    prefix: r.prefix,
    handler: (req, res) => als.run(r, () => shared.callback(req, res)),
  }
}

// The current design: one Provider per instance, built as pool.ts builds it, in an LRU of 500.
const POOL = 500
const pool = new Map<string, Handler>()
const poolLoading = new Map<string, Promise<Handler>>()
const pooledHandler = (id: string): Handler | Promise<Handler> => {
  const hit = pool.get(id)
  if (hit) {
    pool.delete(id)
    pool.set(id, hit)
    return hit
  }
  let p = poolLoading.get(id)
  if (!p) {
    p = loadInstanceKeys(core, id).then((keys) => {
      if (!keys) throw new Error('no keys')
      const prefix = `/i/${id}`
      const provider = buildProvider(core, id, {
        keys,
        policy: { ...DEFAULT_LOGIN_POLICY },
        prefix,
        clients: source,
      })
      const h = { issuer: `${BASE}${prefix}`, prefix, handler: provider.callback() as NodeHandler }
      poolLoading.delete(id)
      if (pool.size >= POOL) pool.delete(pool.keys().next().value as string)
      pool.set(id, h)
      return h
    })
    poolLoading.set(id, p)
  }
  return p
}

async function request(
  h: Handler,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
) {
  const res = await inject(h.handler, {
    method,
    url: path,
    originalUrl: `${h.prefix}${path}`,
    headers: {
      host: '127.0.0.1:1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': '127.0.0.1:1',
      ...headers,
    },
    body: body ? new TextEncoder().encode(body) : null,
    remoteAddress: '127.0.0.1',
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}
const token = (h: Handler, clientId: string) =>
  request(
    h,
    'POST',
    '/token',
    { authorization: basic(clientId), 'content-type': 'application/x-www-form-urlencoded' },
    'grant_type=client_credentials',
  )

// ---------------------------------------------------------------------------------------------
// 1. Isolation, two instances.
const checks: { name: string; ok: boolean; detail?: string }[] = []
const check = (name: string, ok: boolean, detail?: string) => {
  checks.push({ name, ok, detail })
  if (!ok) console.log(`FAIL ${name} ${detail ?? ''}`)
}
const pick = (i: number) => workspaces[i] as (typeof workspaces)[number]

async function isolationPair(a: (typeof workspaces)[number], b: (typeof workspaces)[number], label: string) {
  const ha = await sharedHandler(a.workspaceId)
  const hb = await sharedHandler(b.workspaceId)
  const da = JSON.parse((await request(ha, 'GET', '/.well-known/openid-configuration')).text)
  const db = JSON.parse((await request(hb, 'GET', '/.well-known/openid-configuration')).text)
  check(`${label} discovery A issuer`, da.issuer === a.issuer, da.issuer)
  check(`${label} discovery B issuer`, db.issuer === b.issuer, db.issuer)
  check(
    `${label} discovery endpoints under own issuer`,
    da.token_endpoint === `${a.issuer}/token` &&
      da.jwks_uri === `${a.issuer}/jwks` &&
      db.token_endpoint === `${b.issuer}/token`,
  )
  const ja = JSON.parse((await request(ha, 'GET', '/jwks')).text) as { keys: { kid: string; d?: string }[] }
  const jb = JSON.parse((await request(hb, 'GET', '/jwks')).text) as { keys: { kid: string; d?: string }[] }
  const kidsA = new Set(ja.keys.map((k) => k.kid))
  const kidsB = new Set(jb.keys.map((k) => k.kid))
  check(
    `${label} jwks distinct kids`,
    ja.keys.length === 2 && jb.keys.length === 2 && ![...kidsA].some((k) => kidsB.has(k)),
  )
  check(
    `${label} jwks public only`,
    [...ja.keys, ...jb.keys].every((k) => k.d === undefined),
  )
  check(`${label} jwks no template key`, ![...kidsA, ...kidsB].some((k) => k.startsWith('template')))
  const ta = await token(ha, a.clientId)
  check(`${label} token A 200`, ta.status === 200, ta.text.slice(0, 200))
  // A's client, just used (memo and Client cache warm), presented at B's token endpoint.
  const cross = await token(hb, a.clientId)
  check(
    `${label} A's client at B refused invalid_client`,
    cross.status === 401 && JSON.parse(cross.text).error === 'invalid_client',
    `${cross.status} ${cross.text}`,
  )
  const tb = await token(hb, b.clientId)
  check(`${label} token B 200`, tb.status === 200, tb.text.slice(0, 200))
  const crossBack = await token(ha, b.clientId)
  check(`${label} B's client at A refused`, crossBack.status === 401, crossBack.text)
  const atA = JSON.parse(ta.text).access_token as string
  const atB = JSON.parse(tb.text).access_token as string
  const setA = createLocalJWKSet(ja as never)
  const setB = createLocalJWKSet(jb as never)
  const vA = await jwtVerify(atA, setA, { issuer: a.issuer }).catch((e) => e as Error)
  check(`${label} A's token verifies under A's JWKS and issuer`, !(vA instanceof Error), String(vA))
  const vB = await jwtVerify(atB, setB, { issuer: b.issuer }).catch((e) => e as Error)
  check(`${label} B's token verifies under B's JWKS and issuer`, !(vB instanceof Error), String(vB))
  check(`${label} A's token kid is A's`, kidsA.has(String(decodeProtectedHeader(atA).kid)))
  check(`${label} B's token kid is B's`, kidsB.has(String(decodeProtectedHeader(atB).kid)))
  const bUnderA = await jwtVerify(atB, setA).catch((e) => e as Error)
  check(`${label} B's token does not verify under A's JWKS`, bUnderA instanceof Error)
  const aUnderB = await jwtVerify(atA, setB).catch((e) => e as Error)
  check(`${label} A's token does not verify under B's JWKS`, aUnderB instanceof Error)
  if (!(vA instanceof Error))
    check(`${label} A's token aud`, vA.payload.aud === a.issuer, String(vA.payload.aud))
}

await isolationPair(pick(0), pick(1), 'pair')

// Signed cookies: a cookie signed under A's keys is not accepted under B's (Koa app.keys getter), and
// the session cookie's path is the instance's.
{
  const ra = await records.get(pick(0).workspaceId)
  const rb = await records.get(pick(1).workspaceId)
  const { IncomingMessage, ServerResponse } = await import('node:http')
  const { Socket } = await import('node:net')
  const mkReq = (cookie?: string) => {
    const req = new IncomingMessage(new Socket())
    req.headers = cookie ? { cookie } : {}
    return req
  }
  const setCookie = als.run(ra, () => {
    const req = mkReq()
    const res = new ServerResponse(req)
    const ctx = shared.provider.createContext(req, res)
    ctx.cookies.set('probe', 'v', { signed: true })
    return ([] as string[])
      .concat(res.getHeader('set-cookie') as string[])
      .map((c) => c.split(';')[0])
      .join('; ')
  })
  const readAs = (r: InstanceRecord) =>
    als.run(r, () => {
      const req = mkReq(setCookie)
      return shared.provider
        .createContext(req, new ServerResponse(req))
        .cookies.get('probe', { signed: true })
    })
  check('cookie signed under A reads under A', readAs(ra) === 'v')
  check('cookie signed under A refused under B', readAs(rb) === undefined)
  const longPath = (r: InstanceRecord) =>
    als.run(r, () => internals(shared.provider).configuration.cookies.long.path)
  check('cookies.long.path per instance', longPath(ra) === ra.prefix && longPath(rb) === rb.prefix)
  check(
    'provider.urlFor outside a request uses the instance',
    als.run(ra, () => shared.provider.urlFor('token')) === `${ra.issuer}/token`,
  )
}
// A request outside any instance scope fails closed (500), never the template's issuer or keys.
{
  const r = await request(
    { issuer: '', prefix: '/i/x', handler: shared.callback as NodeHandler },
    'GET',
    '/.well-known/openid-configuration',
  )
  check(
    'no scope → no answer',
    r.status === 500 && !r.text.includes('_shared'),
    `${r.status} ${r.text.slice(0, 120)}`,
  )
}

// ---------------------------------------------------------------------------------------------
// 2. Cold first token.
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((x, y) => x - y)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number
}
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2)} / p95 ${pct(xs, 95).toFixed(2)} ms`
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

let next = 2
async function coldRun(
  label: string,
  get: (id: string) => Handler | Promise<Handler>,
  n: number,
  inFlight: number,
) {
  const slice = workspaces.slice(next, next + n)
  next += n
  const lat: number[] = []
  const loads: number[] = []
  const cpu0 = cpuMs()
  const t0 = performance.now()
  let i = 0
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (i < slice.length) {
        const w = slice[i++] as (typeof slice)[number]
        const s = performance.now()
        const h = await get(w.workspaceId)
        loads.push(performance.now() - s)
        const r = await token(h, w.clientId)
        if (r.status !== 200) throw new Error(`${label}: ${r.status} ${r.text}`)
        lat.push(performance.now() - s)
      }
    }),
  )
  const wall = performance.now() - t0
  console.log(
    `${label}: ${n} cold instances, ${inFlight} in flight: first token ${fmt(lat)} (of which loading keys${label.startsWith('shared') ? '' : ' + building the Provider'} ${fmt(loads)}); CPU ${((cpuMs() - cpu0) / n).toFixed(2)} ms each (wall ${(wall / n).toFixed(2)} ms each)`,
  )
}
async function warmRun(label: string, get: (id: string) => Handler | Promise<Handler>) {
  const w = pick(0)
  const h = await get(w.workspaceId)
  for (let i = 0; i < 200; i++) await token(h, w.clientId)
  const lat: number[] = []
  const c0 = cpuMs()
  for (let i = 0; i < 2000; i++) {
    const s = performance.now()
    await token(h, w.clientId)
    lat.push(performance.now() - s)
  }
  console.log(
    `${label}: warm token (one instance, sequential) ${fmt(lat)}; CPU ${((cpuMs() - c0) / 2000).toFixed(3)} ms each`,
  )
}
// Code compiled once is charged to neither.
for (let k = 0; k < 30; k++) {
  const w = workspaces[workspaces.length - 1 - k] as (typeof workspaces)[number]
  await token(await sharedHandler(w.workspaceId), w.clientId)
  await token(await pooledHandler(w.workspaceId), w.clientId)
}
console.log('\n== cold instance, first token (in process, through inject) ==')
for (let k = 0; k < 3; k++) {
  await warmRun('shared', sharedHandler)
  await warmRun('per-instance', pooledHandler)
}
await coldRun('shared', sharedHandler, COLD, 1)
await coldRun('per-instance Provider', pooledHandler, COLD, 1)
await coldRun('shared', sharedHandler, COLD, 8)
await coldRun('per-instance Provider', pooledHandler, COLD, 8)

// ---------------------------------------------------------------------------------------------
// 3. Live heap per extra instance.
pool.clear()
const collected = () => {
  Bun.gc(true)
  Bun.gc(true)
  return heapStats().heapSize
}
const kib = (b: number) => `${(b / 1024).toFixed(2)} KiB`
const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`
console.log('\n== live heap per instance (shared Provider) ==')
{
  const rest = workspaces.slice(next, N)
  const before = collected()
  const rss0 = process.memoryUsage().rss
  let i = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (i < rest.length) {
        const w = rest[i++] as (typeof rest)[number]
        const h = await sharedHandler(w.workspaceId)
        const d = await request(h, 'GET', '/.well-known/openid-configuration')
        const r = await token(h, w.clientId)
        if (d.status !== 200 || r.status !== 200) throw new Error(`touch ${r.status} ${r.text}`)
      }
    }),
  )
  const after = collected()
  const rss1 = process.memoryUsage().rss
  console.log(
    `${rest.length} more instances touched (discovery + token each; ${records.size} records held): heap ${mib(before)} → ${mib(after)} = ${kib((after - before) / rest.length)} per instance (RSS ${mib(rss0)} → ${mib(rss1)})`,
  )
  // What of it is the client caches (the metadata memo entry and oidc-provider's Client object).
  const memo = clientMemo.size
  clientMemo.clear()
  shared.dynamicClients.clear()
  const noClients = collected()
  console.log(
    `  of which client memo + Client objects (${memo} entries): ${kib((after - noClients) / rest.length)} per instance; instance record (keys, JWKS, cookie keys, imported key objects): ${kib((noClients - before) / rest.length)} per instance`,
  )
}

// ---------------------------------------------------------------------------------------------
// 4. Isolation on a random sample of all, 32 in flight, interleaved.
console.log('\n== isolation, random pairs over all instances, 32 in flight ==')
{
  const before = checks.length
  const pairs = Array.from({ length: 256 }, () => {
    const a = Math.floor(Math.random() * N)
    let b = Math.floor(Math.random() * N)
    if (b === a) b = (a + 1) % N
    return [pick(a), pick(b)] as const
  })
  let i = 0
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (i < pairs.length) {
        const [a, b] = pairs[i++] as (typeof pairs)[number]
        await isolationPair(a, b, 'random')
      }
    }),
  )
  const run = checks.slice(before)
  console.log(`${run.length} checks over ${pairs.length} pairs: ${run.filter((c) => !c.ok).length} failed`)
}

// ---------------------------------------------------------------------------------------------
// 5. Token rate at random over all vs on one.
async function rate(label: string, get: (id: string) => Handler | Promise<Handler>, randomly: boolean) {
  const one = pick(0)
  const deadline = performance.now() + SECONDS * 1000
  let done = 0
  const c0 = cpuMs()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const w = randomly ? pick(Math.floor(Math.random() * N)) : one
        const r = await token(await get(w.workspaceId), w.clientId)
        if (r.status !== 200) throw new Error(`${label}: ${r.status} ${r.text}`)
        done++
      }
    }),
  )
  const secs = (performance.now() - t0) / 1000
  const out = { rps: done / secs, cpu: (cpuMs() - c0) / done }
  console.log(`${label}: ${out.rps.toFixed(0)} tokens/s, ${out.cpu.toFixed(3)} ms CPU each`)
  return out.rps
}
console.log(`\n== tokens, ${CONNECTIONS} in flight, ${SECONDS} s each (in process, through inject) ==`)
const results: Record<string, number> = {}
for (let round = 1; round <= 2; round++) {
  results[`shared one ${round}`] = await rate(`shared, one instance (round ${round})`, sharedHandler, false)
  results[`shared random ${round}`] = await rate(
    `shared, random over ${N} (round ${round})`,
    sharedHandler,
    true,
  )
  results[`pool one ${round}`] = await rate(
    `per-instance pool of ${POOL}, one instance (round ${round})`,
    pooledHandler,
    false,
  )
  results[`pool random ${round}`] = await rate(
    `per-instance pool of ${POOL}, random over ${N} (round ${round})`,
    pooledHandler,
    true,
  )
}
for (const round of [1, 2]) {
  const r = (k: string) => results[`${k} ${round}`] as number
  console.log(
    `round ${round}: random/one shared = ${(r('shared random') / r('shared one')).toFixed(2)}, per-instance pool = ${(r('pool random') / r('pool one')).toFixed(2)}`,
  )
}
// Records held small: how a shared Provider fares when instance records themselves are evicted.
records.clear()
records.max = 500
await rate(`shared, random over ${N}, only 500 instance records held`, sharedHandler, true)

const failed = checks.filter((c) => !c.ok)
console.log(`\nisolation: ${checks.length} checks, ${failed.length} failed`)
await core.store.close()
rmSync(dataDir, { recursive: true, force: true })
process.exit(failed.length ? 1 : 0)
