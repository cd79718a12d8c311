import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { createCore } from '../src/core'
import { loginRequests } from '../src/features/auth/schema'
import { createSession, findSession } from '../src/features/auth/sessions'
import { trySignIns } from '../src/features/try-sign-in/schema'
import { signUp } from '../src/identity'
import { issueAccountToken, useAccountToken } from '../src/identity/accounts'
import { PURGE_EXPIRED } from '../src/jobs/purge-expired'
import { jobHandlers } from '../src/jobs/registry'
import { type JobHandler, JobRunner } from '../src/jobs/runner'
import { enqueuePeriodic } from '../src/jobs/schedule'
import { randomToken } from '../src/shared/crypto'
import { testApp } from './support/app'
import { tempDir } from './support/core'
import { startTestServer } from './support/server'

// Expired identity rows, dashboard sessions, login requests, used mail tokens and stale throttle
// counters are purged by a periodic job (issue 8, item 9), so a flood of device authorizations
// cannot grow the store without bound. Time is the core's ManualClock.

let t: Awaited<ReturnType<typeof testApp>>
let runner: JobRunner<unknown>
const DAY = 24 * 3600_000

beforeAll(async () => {
  t = await testApp()
  runner = new JobRunner(
    t.core.store,
    t.core.clock,
    t.core.log,
    t.core,
    jobHandlers as JobHandler<unknown>[],
    {
      workerId: 'w-purge',
      leaseMs: 60_000,
      concurrency: 1,
    },
  )
})
afterAll(() => rmSync(t.core.config.dataDir, { recursive: true, force: true }))

/** Rows of `table` matching `where` (`$1…` parameters); counted as an integer on SQLite and PostgreSQL. */
const count = async (table: string, where = '1 = 1', params: unknown[] = []) =>
  (
    await t.core.store.query<{ n: number }>(
      `SELECT CAST(count(*) AS INTEGER) AS n FROM ${table} WHERE ${where}`,
      params,
    )
  )[0]!.n

const deviceCodes = () => count('oidc_payloads', "model = 'DeviceCode'")

async function startDevice() {
  const res = await t.identity.fetch('platform', '/device/auth', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'gatehouse-cli', scope: 'openid' }).toString(),
  })
  expect(res.status).toBe(200)
}

async function loginRequest() {
  const state = randomToken(16)
  await t.core.db
    .insert(loginRequests)
    .values({ state, nonce: 'n', codeVerifierSealed: 'v', next: null, createdAt: t.core.clock.now() })
  return state
}

/** A "Try sign-in" started in the dashboard: its row until the callback takes it. */
async function trySignIn() {
  const key = randomToken(16)
  await t.core.db
    .insert(trySignIns)
    .values({ key, workspaceId: 'ws', nonce: 'n', codeVerifierSealed: 'v', createdAt: t.core.clock.now() })
  return key
}

describe('the purge job', () => {
  it('removes what expired or was used, and keeps what is live', async () => {
    const { core } = t
    // One failed sign-in: the attempt is taken before the check, then kept as a failure.
    const failOnce = async (key: string) => {
      expect(await core.limiter.take('signInAccount', key)).toMatchObject({ allowed: true })
      await core.limiter.fail([['signInAccount', key]])
    }
    const account = await signUp(core, 'platform', {
      email: 'purge@example.com',
      password: 'purge password 1',
    })

    // Then: a flood of device authorizations, a session, mailed tokens, a login, failed sign-ins.
    for (let i = 0; i < 25; i++) await startDevice()
    const oldSession = await createSession(core, account.id, null)
    const verifyToken = await issueAccountToken(core, account, 'verify_email', DAY)
    await useAccountToken(core, 'platform', verifyToken, 'verify_email')
    await issueAccountToken(core, account, 'reset_password', 3600_000)
    const oldLogin = await loginRequest()
    await trySignIn()
    await failOnce('stale')
    for (let i = 0; i < 5; i++) await failOnce('was-locked')

    core.clock.advance(8 * DAY)

    // Now: the same, live.
    await startDevice()
    const liveSession = await createSession(core, account.id, null)
    const liveToken = await issueAccountToken(core, account, 'reset_password', 3600_000)
    const liveLogin = await loginRequest()
    const liveTry = await trySignIn()
    await failOnce('recent')
    for (let i = 0; i < 5; i++) await failOnce('locked')

    expect(await deviceCodes()).toBe(26)
    expect(await count('sessions')).toBe(2)
    expect(await count('account_tokens')).toBe(3)
    expect(await count('login_requests')).toBe(2)
    expect(await count('try_sign_ins')).toBe(2)
    expect(await count('login_throttle')).toBe(4)

    expect(await enqueuePeriodic(core)).toBe(1)
    await runner.drain()
    expect(await count('jobs', "kind = $1 AND status = 'done'", [PURGE_EXPIRED])).toBe(1)

    expect(await deviceCodes()).toBe(1)
    expect(await count('sessions')).toBe(1)
    expect(await findSession(core, oldSession.cookie)).toBeNull()
    expect((await findSession(core, liveSession.cookie))?.account.id).toBe(account.id)
    expect(await count('account_tokens')).toBe(1)
    expect((await useAccountToken(core, 'platform', liveToken, 'reset_password'))?.id).toBe(account.id)
    const logins = await core.db.select({ state: loginRequests.state }).from(loginRequests)
    expect(logins.map((l) => l.state)).toEqual([liveLogin])
    expect(logins.map((l) => l.state)).not.toContain(oldLogin)
    expect((await core.db.select({ key: trySignIns.key }).from(trySignIns)).map((r) => r.key)).toEqual([
      liveTry,
    ])
    const keys = await core.store.query<{ key: string }>('SELECT key FROM login_throttle ORDER BY key')
    expect(keys.map((k) => k.key)).toEqual(['acct:locked', 'acct:recent'])
    expect(await core.limiter.take('signInAccount', 'locked')).toMatchObject({ allowed: false })
  })

  it('is enqueued once per slot, however many nodes try', async () => {
    const { core } = t
    // A second node: its own connection to the same store, the same time.
    const other = createCore(core.config, { clock: core.clock, log: core.log })
    try {
      const before = await count('jobs', 'kind = $1', [PURGE_EXPIRED])
      core.clock.advance(5 * 60_000)
      expect(await enqueuePeriodic(core)).toBe(1)
      expect(await enqueuePeriodic(other)).toBe(0)
      expect(await enqueuePeriodic(core)).toBe(0)
      expect(await count('jobs', 'kind = $1', [PURGE_EXPIRED])).toBe(before + 1)
      core.clock.advance(5 * 60_000)
      expect(await enqueuePeriodic(other)).toBe(1)
      expect(await count('jobs', 'kind = $1', [PURGE_EXPIRED])).toBe(before + 2)
    } finally {
      await other.store.close()
    }
  })

  it('drops its own finished rows after a week', async () => {
    const { core } = t
    await runner.drain()
    const finished = await count('jobs', "kind = $1 AND status = 'done'", [PURGE_EXPIRED])
    expect(finished).toBeGreaterThan(1)
    core.clock.advance(8 * DAY)
    expect(await enqueuePeriodic(core)).toBe(1)
    await runner.drain()
    expect(await count('jobs', 'kind = $1', [PURGE_EXPIRED])).toBe(1)
  })
})

describe('finished jobs', () => {
  it('go a day after they finished (a week for periodic slots and dead ones); waiting ones stay', async () => {
    const { core } = t
    const at = core.clock.now()
    const row = (id: string, status: string, updatedAt: number, dedupeKey: string | null = null) =>
      core.store.query(
        `INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, dedupe_key, created_at, updated_at)
         VALUES ($1, 'test.purge', '{}', $2, 1, 5, $3, $4, $3, $3)`,
        [id, status, updatedAt, dedupeKey],
      )
    await row('job_old_done', 'done', at - 2 * DAY)
    await row('job_new_done', 'done', at - DAY / 2)
    await row('job_old_queued', 'queued', at - 30 * DAY)
    await row('job_dead_recent', 'dead', at - 2 * DAY)
    await row('job_dead_old', 'dead', at - 8 * DAY)
    await row('job_slot_recent', 'done', at - 2 * DAY, 'test.purge@1')
    const purge = jobHandlers.find((h) => h.kind === PURGE_EXPIRED)!
    await purge.run({} as never, core as never, {} as never)
    const left = await core.store.query<{ id: string }>(
      "SELECT id FROM jobs WHERE kind = 'test.purge' ORDER BY id",
    )
    expect(left.map((r) => r.id)).toEqual([
      'job_dead_recent',
      'job_new_done',
      'job_old_queued',
      'job_slot_recent',
    ])
  })
})

describe('a running server', () => {
  it('enqueues the current purge slot at start, and its job workers run it', async () => {
    const dataDir = tempDir()
    const server = await startTestServer({}, dataDir)
    try {
      // Resolves once the worker threads ran what was due.
      await server.tick()
      const [row] = await server.core.store.query<{ dedupe_key: string; status: string }>(
        "SELECT dedupe_key, status FROM jobs WHERE kind = $1 AND status = 'done'",
        [PURGE_EXPIRED],
      )
      expect(row?.dedupe_key).toStartWith(`${PURGE_EXPIRED}@`)
    } finally {
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
