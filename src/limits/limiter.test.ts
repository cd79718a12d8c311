import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { testCore } from '../../tests/support/core'
import { loadConfig } from '../config'
import { accountLockRule, DEFAULT_LOGIN_POLICY } from '../identity/login-policy'
import { ATTEMPT_BUCKETS, limitBuckets } from './buckets'

// Every bucket of the one limiter, through `core.limiter.take`: the attempt and window buckets are
// store rows, so this runs on both stores.
const LIMITS = {
  RATE_LIMIT_WORKSPACE_PER_MINUTE: '2',
  RATE_LIMIT_ORGANISATION_PER_MINUTE: '0',
  RATE_LIMIT_ADDRESS_PER_MINUTE: '7',
  RATE_LIMIT_BATCH_PER_MINUTE: '1',
  RATE_LIMIT_DATA_PLANE_RPS: '1',
  RATE_LIMIT_DATA_PLANE_BURST: '4',
  RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE: '0.5',
  RATE_LIMIT_DATA_PLANE_PAGE_RESERVE: '0.25',
  WEBHOOK_RATE_PER_MINUTE: '2',
  WEBHOOK_ENDPOINT_CONCURRENCY: '1',
}
const core = await testCore(LIMITS)
const { limiter, clock } = core
afterAll(async () => {
  await core.store.close()
  rmSync(core.config.dataDir, { recursive: true, force: true })
})

describe('the bucket table', () => {
  it('reads every bucket from configuration, in one table', () => {
    const config = loadConfig({ DATA_DIR: core.config.dataDir, ...LIMITS })
    const minute = (name: string, prefix: string, limit: number) => ({
      kind: 'shared' as const,
      name,
      prefix,
      limit,
      periodMs: 60_000,
    })
    const attempts = (prefix: string, limit: number) => ({
      kind: 'attempts' as const,
      prefix,
      limit,
      windowMs: 15 * 60_000,
      lockMs: 15 * 60_000,
    })
    expect(limitBuckets(config)).toEqual({
      workspace: minute('workspace', 'ws', 2),
      organisation: minute('organisation', 'org', 0),
      address: minute('client address', 'addr', 7),
      batch: minute('workspace (batch)', 'batch', 1),
      dataPlane: { kind: 'node', rps: 1, burst: 4, addressShare: 0.5, pageReserve: 0.25 },
      signInAccount: attempts('acct', 5),
      signInAddress: attempts('ip', 30),
      resetMail: attempts('reset', 3),
      verifyMail: attempts('verify', 3),
      webhookEgress: { kind: 'window', limit: 2, seconds: 61, concurrency: 1 },
    })
    expect(limiter.buckets).toEqual(limitBuckets(config))
  })

  it("holds the default login policy's lock as the account's attempt bucket", () => {
    const { limit, windowMs, lockMs } = ATTEMPT_BUCKETS.signInAccount
    expect(accountLockRule(DEFAULT_LOGIN_POLICY)).toEqual({ limit, windowMs, lockMs })
  })
})

describe('limiter.take', () => {
  it('counts a shared bucket per minute, and answers null for one that is off', async () => {
    expect(await limiter.take('workspace', 'w1')).toMatchObject({ allowed: true, limit: 2, remaining: 1 })
    expect(await limiter.take('workspace', 'w1')).toMatchObject({ allowed: true, remaining: 0 })
    expect(await limiter.take('workspace', 'w1')).toMatchObject({
      allowed: false,
      name: 'workspace',
      remaining: 0,
      retryAfter: 30,
    })
    expect(await limiter.take('organisation', 'o1')).toBeNull()
    expect(await limiter.take('address', '192.0.2.1')).toMatchObject({
      allowed: true,
      name: 'client address',
    })
  })

  it('takes from every shared bucket of a check or from none', async () => {
    expect(await limiter.takeAll([['batch', 'w2']])).toMatchObject([{ allowed: true }])
    // The batch bucket refuses: the workspace's is not charged.
    expect(
      await limiter.takeAll([
        ['workspace', 'w2'],
        ['batch', 'w2'],
        ['organisation', 'o2'],
      ]),
    ).toMatchObject([{ allowed: false, name: 'workspace (batch)' }])
    expect(await limiter.takeAll([['workspace', 'w2']])).toMatchObject([{ allowed: true, remaining: 1 }])
  })

  it("splits the data plane's bucket between addresses and keeps the page reserve", () => {
    const call = (ip: string, page: boolean) =>
      limiter.take('dataPlane', 'inst', { page, address: () => ip, rps: null })
    // One address: half the burst (2), JSON requests at most 3 of 4.
    expect([call('192.0.2.1', false), call('192.0.2.1', false), call('192.0.2.1', false)]).toMatchObject([
      { allowed: true, name: 'instance', limit: 1 },
      { allowed: true },
      { allowed: false, name: 'address', limit: 0.5, retryAfter: 2 },
    ])
    expect(call('198.51.100.1', false)).toMatchObject({ allowed: true })
    expect(call('198.51.100.1', false)).toMatchObject({ allowed: false, name: 'instance', retryAfter: 1 })
    // A page takes the reserve.
    expect(call('198.51.100.1', true)).toMatchObject({ allowed: true, remaining: 0 })
    expect(call('203.0.113.1', true)).toMatchObject({ allowed: false, name: 'instance' })
    // A workspace's own rate.
    expect(
      limiter.take('dataPlane', 'other', { page: false, address: () => '192.0.2.1', rps: 10 }),
    ).toMatchObject({ allowed: true, limit: 10 })
  })

  it('counts attempt buckets until they refuse, with the wait of their lock', async () => {
    const key = 'inst:ada@example.com'
    for (let i = 0; i < 3; i++) expect(await limiter.take('verifyMail', key)).toMatchObject({ allowed: true })
    expect(await limiter.take('verifyMail', key)).toMatchObject({ allowed: false, retryAfter: 15 * 60 })
    // An instance's own lock: one attempt.
    const rule = { limit: 1, windowMs: 60_000, lockMs: 60_000 }
    expect(await limiter.take('signInAccount', key, rule)).toMatchObject({
      allowed: true,
      limit: 1,
      remaining: 0,
    })
    await limiter.fail([['signInAccount', key, rule]])
    expect(await limiter.take('signInAccount', key, rule)).toMatchObject({ allowed: false, retryAfter: 60 })
    await limiter.forget('signInAccount', key)
    expect(await limiter.take('signInAccount', key, rule)).toMatchObject({ allowed: true })
  })

  it("counts a webhook endpoint's rolling minute and its requests in flight", async () => {
    const now = clock.now()
    const take = (inFlight: number) =>
      core.store.tx((tx) =>
        limiter.take(
          'webhookEgress',
          'wh_1',
          { tx, workspaceId: 'ws_1', inFlight: async () => inFlight },
          now,
        ),
      )
    expect(await take(1)).toMatchObject({ allowed: false, retryAt: now + 250 })
    expect(await take(0)).toMatchObject({ allowed: true, remaining: 1 })
    expect(await take(0)).toMatchObject({ allowed: true, remaining: 0 })
    // Full until its oldest second has left the 61 s it sums.
    expect(await take(0)).toMatchObject({ allowed: false, retryAt: (Math.floor(now / 1000) + 61) * 1000 })
  })
})
