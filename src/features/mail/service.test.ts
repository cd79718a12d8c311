import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { testCore } from '../../../tests/support/core'
import { type SmtpSink, startSmtpServer } from '../../../tests/support/smtp'
import type { Core } from '../../core'
import { jobHandlers } from '../../jobs/registry'
import { type JobHandler, JobRunner } from '../../jobs/runner'
import { jobs } from '../../queue/schema'
import { MAIL_SEND, sealMail } from './jobs'
import { latestDevMails } from './outbox'
import { devOutbox } from './schema'
import { sendMail } from './service'

const runnerFor = (core: Core) =>
  new JobRunner(core.store, core.clock, core.log, core, jobHandlers as JobHandler<Core>[], {
    workerId: 'w-mail',
    leaseMs: 30_000,
    concurrency: 2,
  })
const jobRow = async (core: Core, id: string) =>
  (await core.db.select().from(jobs).where(eq(jobs.id, id)).limit(1))[0]!

const LINK = 'http://localhost:8080/i/ws/verify?code=abc'
const mail = {
  to: 'ada@example.com',
  subject: 'Verify your email',
  text: `Open ${LINK} to verify.`,
}

let smtp: SmtpSink
beforeAll(async () => {
  smtp = await startSmtpServer()
})
afterAll(() => smtp.close())

describe('sendMail', () => {
  it('queues a mail.send job and sends nothing until the job runs', async () => {
    const core = await testCore({ SMTP_URL: smtp.url })
    const id = await sendMail(core, { ...mail, workspaceId: 'ws-1' })
    expect(await jobRow(core, id)).toMatchObject({ kind: 'mail.send', status: 'queued', workspaceId: 'ws-1' })
  })

  it("enqueues in the caller's transaction: a rollback sends nothing", async () => {
    const core = await testCore({ SMTP_URL: smtp.url })
    await expect(
      core.store.tx(async (tx) => {
        await sendMail(core, mail, { tx })
        throw new Error('rollback')
      }),
    ).rejects.toThrow('rollback')
    expect(await core.db.select().from(jobs)).toHaveLength(0)
  })
})

describe('the mail.send job', () => {
  it('delivers through the configured SMTP server', async () => {
    const core = await testCore({ SMTP_URL: smtp.url, SMTP_FROM: 'Acme <auth@acme.test>' })
    const to = `smtp-${crypto.randomUUID()}@example.com`
    const id = await sendMail(core, { ...mail, to, html: '<p>Verify</p>' })
    await runnerFor(core).drain()
    expect(await jobRow(core, id)).toMatchObject({ status: 'done', attempts: 1, lastError: null })

    const received = await smtp.waitFor((m) => m.to !== undefined && JSON.stringify(m.to).includes(to))
    expect(received.subject).toBe(mail.subject)
    expect(received.text?.trim()).toBe(mail.text)
    expect(received.html).toContain('<p>Verify</p>')
    expect(received.from?.value).toEqual([{ address: 'auth@acme.test', name: 'Acme' }])
    expect(await core.db.select().from(devOutbox)).toHaveLength(0)
  })

  it('logs in with the credentials of SMTP_URL and never writes the password anywhere', async () => {
    const url = smtp.url.replace('smtp://', 'smtp://mailer:s3cr%3At-pw@')
    const core = await testCore({ SMTP_URL: url })
    const to = `auth-${crypto.randomUUID()}@example.com`
    await sendMail(core, { ...mail, to })
    await runnerFor(core).drain()
    await smtp.waitFor((m) => JSON.stringify(m.to).includes(to))
    expect(smtp.logins).toContainEqual({ username: 'mailer', password: 's3cr:t-pw' })
    expect(JSON.stringify(core.logLines)).not.toContain('s3cr')
  })

  it('stays queued with the error recorded when the SMTP server is down, to be retried', async () => {
    const down = await startSmtpServer()
    await down.close()
    const core = await testCore({ SMTP_URL: down.url.replace('smtp://', 'smtp://mailer:hunter2@') })
    const id = await sendMail(core, mail)
    await runnerFor(core).drain()
    const row = await jobRow(core, id)
    expect(row).toMatchObject({ status: 'queued', attempts: 1 })
    expect(row.lastError).toContain('ECONNREFUSED')
    expect(row.lastError).not.toContain('hunter2')
    expect(row.runAt).toBeGreaterThan(core.clock.now())
    expect(JSON.stringify(core.logLines)).not.toContain('hunter2')
  })

  it('writes to the dev outbox when no SMTP is configured, and logs no link', async () => {
    const core = await testCore({ HOST: '127.0.0.1' })
    const id = await sendMail(core, { ...mail, workspaceId: 'ws-2' })
    await runnerFor(core).drain()
    expect((await jobRow(core, id)).status).toBe('done')
    expect(await latestDevMails(core, 10)).toEqual([
      {
        id: expect.stringMatching(/^mail_/),
        workspaceId: 'ws-2',
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        // A text mail gets its HTML part when it is sent (render.tsx), the link made a link.
        html: expect.stringContaining(`href="${mail.text.match(/https?:\/\/\S+/)![0]}"`),
        createdAt: core.clock.now(),
      },
    ])
    expect(core.logLines).toContainEqual(
      expect.objectContaining({ level: 'info', msg: 'mail kept in the dev outbox', to: mail.to }),
    )
    expect(JSON.stringify(core.logLines)).not.toContain(LINK)
  })

  it('drops the mail with a warning, and logs no link, when neither SMTP nor the dev outbox is on', async () => {
    const core = await testCore({ DEV_OUTBOX: 'false' })
    const id = await sendMail(core, mail)
    await runnerFor(core).drain()
    expect((await jobRow(core, id)).status).toBe('done')
    expect(await core.db.select().from(devOutbox)).toHaveLength(0)
    expect(core.logLines).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'mail not delivered: set SMTP_URL' }),
    )
    expect(JSON.stringify(core.logLines)).not.toContain(LINK)
  })
})

describe('a mail in the job queue', () => {
  for (const [name, env] of [
    ['sent through SMTP', () => ({ SMTP_URL: smtp.url })],
    ['kept in the dev outbox', () => ({ HOST: '127.0.0.1' })],
  ] as const) {
    it(`is sealed while queued and gone from the job row once ${name}`, async () => {
      const core = await testCore(env())
      const to = `sealed-${crypto.randomUUID()}@example.com`
      const id = await sendMail(core, { ...mail, to })
      const queued = (await jobRow(core, id)).payload
      expect(queued).not.toContain(LINK)
      expect(queued).not.toContain(to)
      await runnerFor(core).drain()
      const row = await jobRow(core, id)
      expect(row.status).toBe('done')
      expect(JSON.stringify(row)).not.toContain(queued)
      expect(JSON.stringify(row)).not.toContain(LINK)
      expect(JSON.stringify(core.logLines)).not.toContain(LINK)
    })
  }

  it('is forgotten too when the job gives up for good', async () => {
    const down = await startSmtpServer()
    await down.close()
    const core = await testCore({ SMTP_URL: down.url })
    const id = await core.jobs.enqueue(MAIL_SEND, sealMail(core, mail), { maxAttempts: 1 })
    await runnerFor(core).drain()
    const row = await jobRow(core, id)
    expect(row.status).toBe('dead')
    expect(row.payload).toBe('null')
  })

  it('still delivers a job queued before mails were sealed (a plain payload)', async () => {
    const core = await testCore({ HOST: '127.0.0.1' })
    const id = await core.jobs.enqueue(MAIL_SEND, mail)
    await runnerFor(core).drain()
    expect(await jobRow(core, id)).toMatchObject({ status: 'done', payload: 'null' })
    expect(await latestDevMails(core, 10)).toEqual([
      expect.objectContaining({ subject: mail.subject, text: mail.text }),
    ])
  })
})
