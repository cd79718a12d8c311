import { afterAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { testCore } from '../../../tests/support/core'
import type { Core } from '../../core'
import { smtpProviders } from '../smtp/schema'
import { type MailPurpose, routeMail } from './route'

// Every case of the one mail routing function: the workspace's server, the platform's, the dev
// outbox, nowhere; and the test mail's rules (issue 56). Reads the store (the provider row).
const core = await testCore()
afterAll(async () => {
  await core.store.close()
  rmSync(core.config.dataDir, { recursive: true, force: true })
})

const WITH_SERVER = 'ws_with_server'
await core.db.insert(smtpProviders).values({
  id: 'smtp_1',
  workspaceId: WITH_SERVER,
  host: 'mail.example.com',
  port: 587,
  security: 'starttls',
  fromAddress: 'noreply@example.com',
  active: true,
  createdAt: core.clock.now(),
})

/** The core with the platform's mail settings of a case. */
const platform = (smtpUrl: string | null, devOutbox: boolean): Core => ({
  ...core,
  config: { ...core.config, smtpUrl, devOutbox },
})
const SMTP_URL = 'smtp://127.0.0.1:2525'
const ada = { email: 'ada@example.com', emailVerified: true }
const test = (caller: typeof ada | null, to: string): MailPurpose => ({ kind: 'test', caller, to })

describe('routeMail', () => {
  it("sends through the workspace's own server, a test mail to any address", async () => {
    for (const purpose of [undefined, test(null, 'anyone@example.org')])
      expect(await routeMail(platform(null, false), WITH_SERVER, purpose)).toMatchObject({
        via: 'workspace',
        provider: { id: 'smtp_1' },
      })
  })

  it("sends through the platform's server without one, and the platform's own mail too", async () => {
    for (const workspaceId of ['ws_other', null])
      expect(await routeMail(platform(SMTP_URL, true), workspaceId)).toMatchObject({
        via: 'platform',
        smtpUrl: SMTP_URL,
      })
  })

  it("sends a test mail through the platform's server only to the caller's own verified address", async () => {
    const route = (purpose: MailPurpose) => routeMail(platform(SMTP_URL, false), 'ws_other', purpose)
    expect(await route(test(ada, ' Ada@Example.com'))).toMatchObject({ via: 'platform' })
    expect(await route(test(ada, 'bob@example.com'))).toMatchObject({
      via: 'none',
      recipient: true,
      why: expect.stringContaining('only to your own verified address'),
    })
    expect(await route(test(null, 'ada@example.com'))).toMatchObject({
      via: 'none',
      recipient: true,
      why: expect.stringContaining('a machine key has none'),
    })
    expect(await route(test({ ...ada, emailVerified: false }, 'ada@example.com'))).toMatchObject({
      via: 'none',
      recipient: true,
      why: expect.stringContaining('Verify your address first'),
    })
  })

  it('keeps mail in the dev outbox without a server, but never a test mail', async () => {
    expect(await routeMail(platform(null, true), 'ws_other')).toMatchObject({ via: 'outbox' })
    const tested = await routeMail(platform(null, true), 'ws_other', test(ada, 'ada@example.com'))
    expect(tested).toMatchObject({ via: 'none', why: expect.stringContaining('SMTP_URL is unset') })
    expect(tested).not.toHaveProperty('recipient')
    // The address is refused before the missing server is told.
    expect(await routeMail(platform(null, true), 'ws_other', test(ada, 'bob@example.com'))).toMatchObject({
      via: 'none',
      recipient: true,
    })
  })

  it('says why no mail can leave when the dev outbox is off too', async () => {
    expect(await routeMail(platform(null, false), null)).toEqual({
      via: 'none',
      why: "no SMTP server is set: neither this workspace's nor the platform's (SMTP_URL), and the development outbox is off",
    })
  })
})
