import { describe, expect, it } from 'bun:test'
import { testCore } from '../../../tests/support/core'
import { keepInDevOutbox, latestDevMails, purgeExpiredMail } from './outbox'

const mail = (subject: string) => ({ to: 'ada@example.com', subject, text: 'x' })

describe('the periodic purge of the dev outbox', () => {
  it('drops mails older than a day and counts them', async () => {
    const core = await testCore({ HOST: '127.0.0.1' })
    await keepInDevOutbox(core, mail('old'))
    core.clock.advance(12 * 3600_000)
    await keepInDevOutbox(core, mail('recent'))
    core.clock.advance(12 * 3600_000 + 1)
    expect(await purgeExpiredMail(core)).toEqual({ dev_outbox: 1 })
    expect(await purgeExpiredMail(core)).toEqual({ dev_outbox: 0 })
    expect((await latestDevMails(core, 10)).map((m) => m.subject)).toEqual(['recent'])
  })
})
