import { afterAll, afterEach, beforeAll, describe, expect, it, spyOn } from 'bun:test'
import { rmSync } from 'node:fs'
import { ManualClock } from '../src/shared/clock'
import { tempDir } from './support/core'
import { startTestServer, type TestServer } from './support/server'
import { signInForm } from './support/sign-in'

const LOCKED = 'Too many failed sign-in attempts. Try again in 15 minutes.'

let server: TestServer
const dataDir = tempDir()
// Starts at the real time: oidc-provider checks its own expiries against the system clock.
const clock = new ManualClock(Date.now())
let verify: ReturnType<typeof spyOn<typeof Bun.password, 'verify'>>

beforeAll(async () => {
  server = await startTestServer({}, dataDir, { clock })
})
afterAll(async () => {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
})
afterEach(() => verify?.mockRestore())

const countOf = (statuses: number[], status: number) => statuses.filter((s) => s === status).length

describe('sign-in throttling under concurrency', () => {
  it('verifies at most 5 of 40 wrong passwords sent at once for one account; the rest get 429', async () => {
    const { post, account } = await signInForm(server)
    verify = spyOn(Bun.password, 'verify')
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(account.email, `wrong-guess-${i}`)),
    )
    const statuses = answers.map((r) => r.status)
    expect(verify).toHaveBeenCalledTimes(5)
    expect(countOf(statuses, 401)).toBe(5)
    expect(countOf(statuses, 429)).toBe(35)
    const locked = await answers[statuses.indexOf(429)]!.text()
    expect(locked).toContain(LOCKED)
    const wrong = await answers[statuses.indexOf(401)]!.text()
    expect(wrong).toContain('Wrong email or password.')
  })

  it('verifies at most 30 of 40 wrong passwords sent at once from one address across accounts', async () => {
    const { post } = await signInForm(server)
    verify = spyOn(Bun.password, 'verify')
    // A different account each time: only the per-address rule can lock. Without TRUSTED_PROXIES
    // a forged X-Forwarded-For changes nothing: all 40 come from the one real address.
    const forged = (i: number) => ({ 'x-forwarded-for': `203.0.113.${i + 1}` })
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(`spray-${i}@example.com`, 'sprayed-password', forged(i))),
    )
    const statuses = answers.map((r) => r.status)
    expect(verify).toHaveBeenCalledTimes(30)
    expect(countOf(statuses, 401)).toBe(30)
    expect(countOf(statuses, 429)).toBe(10)
  })
})

describe('sign-in lockout', () => {
  it('refuses even the right password while locked, and lets it in once the lock has expired', async () => {
    const { post, account } = await signInForm(server)
    for (let i = 0; i < 5; i++) expect((await post(account.email, `wrong-${i}`)).status).toBe(401)
    const locked = await post(account.email, account.password)
    expect(locked.status).toBe(429)
    expect(await locked.text()).toContain(LOCKED)

    clock.advance(14 * 60_000)
    const stillLocked = await post(account.email, account.password)
    expect(stillLocked.status).toBe(429)
    expect(await stillLocked.text()).toContain('Try again in 1 minute.')

    clock.advance(60_000 + 1)
    const signedIn = await post(account.email, account.password)
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get('location')).toContain('/auth/')
  })

  it('forgets failures after a successful sign-in', async () => {
    const { post, account } = await signInForm(server)
    for (let i = 0; i < 4; i++) expect((await post(account.email, `wrong-${i}`)).status).toBe(401)
    expect((await post(account.email, account.password)).status).toBe(303)
    for (let i = 0; i < 4; i++) expect((await post(account.email, `again-${i}`)).status).toBe(401)
  })
})
