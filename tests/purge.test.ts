import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { createCore } from '../src/core'
import { loginRequests } from '../src/features/auth/schema'
import { createSession, findSession } from '../src/features/auth/sessions'
import { signUp } from '../src/identity'
import { issueAccountToken, useAccountToken } from '../src/identity/accounts'
import { LoginThrottle, SIGN_IN_RULES } from '../src/identity/throttle'
import { PURGE_EXPIRED } from '../src/jobs/maintenance'
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
  runner = new JobRunner(t.core.db, t.core.clock, t.core.log, t.core, jobHandlers as JobHandler<unknown>[], {
    workerId: 'w-purge',
    leaseMs: 60_000,
    concurrency: 1,
  })
})
afterAll(() => rmSync(t.core.config.dataDir, { recursive: true, force: true }))

const count = (table: string, where = '1 = 1', params: Record<string, string> = {}) =>
  (t.core.db.$client.query(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(params) as { n: number })
    .n

const deviceCodes = () => count('oidc_payloads', "model = 'DeviceCode'")

async function startDevice() {
  const res = await t.identity.fetch('platform', '/device/auth', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'gatehouse-cli', scope: 'openid' }).toString(),
  })
  expect(res.status).toBe(200)
}

function loginRequest() {
  const state = randomToken(16)
  t.core.db
    .insert(loginRequests)
    .values({ state, nonce: 'n', codeVerifier: 'v', next: null, createdAt: t.core.clock.now() })
    .run()
  return state
}

describe('the purge job', () => {
  it('removes what expired or was used, and keeps what is live', async () => {
    const { core } = t
    const throttle = new LoginThrottle(core)
    // One failed sign-in: the attempt is reserved before the check, then kept as a failure.
    const failOnce = (key: string) => {
      const entry: [string, typeof SIGN_IN_RULES.account] = [key, SIGN_IN_RULES.account]
      expect(throttle.reserve([entry])).toBe(0)
      throttle.fail([entry])
    }
    const account = await signUp(core, 'platform', {
      email: 'purge@example.com',
      password: 'purge password 1',
    })

    // Then: a flood of device authorizations, a session, mailed tokens, a login, failed sign-ins.
    for (let i = 0; i < 25; i++) await startDevice()
    const oldSession = createSession(core, account.id, null)
    useAccountToken(core, 'platform', issueAccountToken(core, account, 'verify_email', DAY), 'verify_email')
    issueAccountToken(core, account, 'reset_password', 3600_000)
    const oldLogin = loginRequest()
    failOnce('acct:stale')
    for (let i = 0; i < 5; i++) failOnce('acct:was-locked')

    core.clock.advance(8 * DAY)

    // Now: the same, live.
    await startDevice()
    const liveSession = createSession(core, account.id, null)
    const liveToken = issueAccountToken(core, account, 'reset_password', 3600_000)
    const liveLogin = loginRequest()
    failOnce('acct:recent')
    for (let i = 0; i < 5; i++) failOnce('acct:locked')

    expect(deviceCodes()).toBe(26)
    expect(count('sessions')).toBe(2)
    expect(count('account_tokens')).toBe(3)
    expect(count('login_requests')).toBe(2)
    expect(count('login_throttle')).toBe(4)

    expect(enqueuePeriodic(core)).toBe(1)
    await runner.drain()
    expect(count('jobs', "kind = $kind AND status = 'done'", { kind: PURGE_EXPIRED })).toBe(1)

    expect(deviceCodes()).toBe(1)
    expect(count('sessions')).toBe(1)
    expect(findSession(core, oldSession.cookie)).toBeNull()
    expect(findSession(core, liveSession.cookie)?.account.id).toBe(account.id)
    expect(count('account_tokens')).toBe(1)
    expect(useAccountToken(core, 'platform', liveToken, 'reset_password')?.id).toBe(account.id)
    const logins = core.db.select({ state: loginRequests.state }).from(loginRequests).all()
    expect(logins.map((l) => l.state)).toEqual([liveLogin])
    expect(logins.map((l) => l.state)).not.toContain(oldLogin)
    const keys = core.db.$client.query('SELECT key FROM login_throttle ORDER BY key').all() as {
      key: string
    }[]
    expect(keys.map((k) => k.key)).toEqual(['acct:locked', 'acct:recent'])
    expect(throttle.reserve([['acct:locked', SIGN_IN_RULES.account]])).toBeGreaterThan(0)
  })

  it('is enqueued once per slot, however many nodes try', () => {
    const { core } = t
    // A second node: its own connection to the same store, the same time.
    const other = createCore(core.config, { clock: core.clock, log: core.log })
    try {
      const before = count('jobs', 'kind = $kind', { kind: PURGE_EXPIRED })
      core.clock.advance(5 * 60_000)
      expect(enqueuePeriodic(core)).toBe(1)
      expect(enqueuePeriodic(other)).toBe(0)
      expect(enqueuePeriodic(core)).toBe(0)
      expect(count('jobs', 'kind = $kind', { kind: PURGE_EXPIRED })).toBe(before + 1)
      core.clock.advance(5 * 60_000)
      expect(enqueuePeriodic(other)).toBe(1)
      expect(count('jobs', 'kind = $kind', { kind: PURGE_EXPIRED })).toBe(before + 2)
    } finally {
      other.db.$client.close()
    }
  })

  it('drops its own finished rows after a week', async () => {
    const { core } = t
    await runner.drain()
    const finished = count('jobs', "kind = $kind AND status = 'done'", { kind: PURGE_EXPIRED })
    expect(finished).toBeGreaterThan(1)
    core.clock.advance(8 * DAY)
    expect(enqueuePeriodic(core)).toBe(1)
    await runner.drain()
    expect(count('jobs', 'kind = $kind', { kind: PURGE_EXPIRED })).toBe(1)
  })
})

describe('a running server', () => {
  it('enqueues the current purge slot at start, and its job workers run it', async () => {
    const dataDir = tempDir()
    const server = await startTestServer({}, dataDir)
    try {
      // Resolves once the worker threads ran what was due.
      await server.tick()
      const row = server.core.db.$client
        .query("SELECT dedupe_key, status FROM jobs WHERE kind = $kind AND status = 'done'")
        .get({ kind: PURGE_EXPIRED }) as { dedupe_key: string; status: string } | null
      expect(row?.dedupe_key).toStartWith(`${PURGE_EXPIRED}@`)
    } finally {
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
