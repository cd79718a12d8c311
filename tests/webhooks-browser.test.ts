// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { SUBSCRIBABLE_EVENTS } from '../src/events/emit'
import { workspaceMembers } from '../src/features/workspaces/schema'
import { ManualClock } from '../src/shared/clock'
import { acceptConfirmations, settled, sharedBrowser, signedInPage } from './support/browser'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { type Json, json, type PlatformUser, signUpUser } from './support/users'
import { parseSignature, type Receiver, startReceiver, verifySignature } from './support/webhook-receiver'

// Issue 28, item 5 in headless Chromium: Settings → Webhooks. An owner adds an endpoint (a receiver
// on 127.0.0.1) and sees its signing secret once, sends a test event and finds it delivered in the
// log, sees a 500 as a failed attempt with its code and answer, the endpoint paused after a day
// down and reactivated, the delivery under Failed once its schedule is spent, and Redeliver bring
// it through; then rotates the secret (both sign for a day), disables, enables and deletes the
// endpoint. A viewer sees no endpoint. The cases build on each other, in file order, on one server
// and one browser; jobs run in process on the server's ManualClock (turn it, then tick).

const MINUTE = 60_000
const HOUR = 60 * MINUTE
/** DESIGN: after a failure, attempts at these offsets from the first failed attempt. */
const RETRY_OFFSETS = [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 48 * HOUR]
const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/

const ownerUser = { email: 'grace@example.com', password: 'compiler-a0-1952-cobol', name: 'Grace Hopper' }
const viewerUser = { email: 'ada@example.com', password: 'analytical-engine-1843', name: 'Ada Lovelace' }

// Started at the real time: the sign-in reads it beside the browser's clock.
const clock = new ManualClock(Date.now())
// Launched as the file loads: sharedBrowser's afterAll (which closes it) then belongs to the file,
// not to the case that first asked for it.
await sharedBrowser()
let server: TestServer
let receiver: Receiver
let owner: PlatformUser
let ws: string
let hooksUrl: string
let hookUrl: string
let endpointUrl: string
let page: Page
let errors: string[] = []
/** Every confirmation the owner's page asked, accepted. */
const confirmations: string[] = []
/** The secrets the page showed, in order: the created endpoint's, then its rotation's. */
const secrets: string[] = []
let hookId = ''

/** What the job timers would do by now: run every job due, and what those jobs enqueued. */
async function runJobs() {
  await server.tick()
  await server.tick()
}

/** Clicks a button of the endpoint page and waits for `#webhook` redrawn by its answer. */
async function act(name: string | RegExp, scope = page.locator('#webhook-actions')) {
  const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().startsWith(hookUrl))
  await scope.getByRole('button', { name }).click()
  expect((await posted).status()).toBe(200)
  await settled(page)
}

const listed = async () => (await json(owner.agent, 'GET', `/v1/workspaces/${ws}/webhooks`)).body
const logRow = (p: Page, index = 0) => p.locator('#delivery-rows tr').nth(index)
const cell = (row: ReturnType<typeof logRow>, n: number) => row.locator('td').nth(n)

beforeAll(async () => {
  receiver = startReceiver()
  server = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' }, undefined, {
    clock,
  })
  owner = await signUpUser(server, ownerUser)
  ws = await activeWorkspace(server.core, owner.id)
  hooksUrl = `${server.baseUrl}/app/workspaces/${ws}/settings/webhooks`
  endpointUrl = receiver.url()
})
// The browser (and with it every context) closes after the file, by sharedBrowser's own hook.
afterAll(async () => {
  await server?.stop()
  await receiver?.stop()
})

describe('Settings → Webhooks in the dashboard', () => {
  it('is linked from the workspace settings and starts empty, one checkbox per event type billing off can send', async () => {
    const signed = await signedInPage(server.baseUrl, ownerUser)
    page = signed.page
    errors = signed.errors
    acceptConfirmations(page, confirmations)
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.waitForURL(hooksUrl)
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
    await page.getByText('No webhook endpoints yet').waitFor()
    const boxes = page.locator('#webhook-events input[type=checkbox]')
    // This server has no Stripe: the billing events, which could never fire, are not offered.
    const offered = SUBSCRIBABLE_EVENTS.filter((e) => /^(user|session|tenant)\./.test(e))
    expect(await boxes.evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))).toEqual(offered)
    for (const type of offered) expect(await page.getByLabel(type).isChecked()).toBe(false)
  })

  it('refuses what the API refuses next to its field (422), keeping what was typed', async () => {
    const post = () => {
      const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === hooksUrl)
      return page
        .getByRole('button', { name: 'Add endpoint' })
        .click()
        .then(() => posted)
    }
    // No event ticked: the model's rule.
    await page.getByLabel('Endpoint URL').fill('https://hooks:pw@example.com/in')
    expect((await post()).status()).toBe(422)
    await page.locator('#webhook-events-error').waitFor()
    await settled(page)
    expect(await page.locator('#webhook-events-error').textContent()).toBe('Choose at least one event type.')
    await expect(page.locator('#webhook-url-error').count()).resolves.toBe(0)

    // The service's outbound guard, as the API's 422 says it, at the URL.
    await page.getByLabel('user.created').check()
    await page.getByLabel('tenant.deleted').check()
    expect((await post()).status()).toBe(422)
    await page.locator('#webhook-url-error').waitFor()
    await settled(page)
    expect(await page.locator('#webhook-url-error').textContent()).toBe('Leave credentials out of the URL.')
    const api = await json(owner.agent, 'POST', `/v1/workspaces/${ws}/webhooks`, {
      url: 'https://hooks:pw@example.com/in',
      events: ['user.created'],
    })
    expect(api.status).toBe(422)
    expect(api.body.detail[0]).toMatchObject({
      loc: ['body', 'url'],
      msg: 'Leave credentials out of the URL',
    })
    expect(await page.getByLabel('Endpoint URL').inputValue()).toBe('https://hooks:pw@example.com/in')
    expect(await page.getByLabel('user.created').isChecked()).toBe(true)
    expect(await page.getByLabel('tenant.deleted').isChecked()).toBe(true)
    expect(await page.getByLabel('user.deleted').isChecked()).toBe(false)
    await expect(page.locator('#webhook-secret').count()).resolves.toBe(0)
    expect((await listed()).total).toBe(0)
  })

  it('adds an endpoint and shows its signing secret once, with a copy button', async () => {
    await page.getByLabel('Endpoint URL').fill(endpointUrl)
    await page.getByLabel('Description (optional)').fill('Billing <service>')
    await page.getByLabel('tenant.deleted').uncheck()
    await page.getByLabel('session.started').check()
    const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === hooksUrl)
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    expect((await posted).status()).toBe(200)
    await page.locator('#webhook-secret').waitFor()
    await settled(page)

    const secret = (await page.locator('#webhook-secret code[title="Signing secret"]').textContent()) ?? ''
    expect(secret).toMatch(SECRET)
    secrets.push(secret)
    expect(await page.locator('#webhook-secret').textContent()).toContain(
      'Copy this signing secret now: it will not be shown again.',
    )
    expect(
      await page.locator('#webhook-secret').getByRole('button', { name: 'Copy' }).getAttribute('data-copy'),
    ).toBe(secret)

    const body = await listed()
    expect(body.items).toMatchObject([
      {
        url: endpointUrl,
        events: ['user.created', 'session.started'],
        description: 'Billing <service>',
        status: 'active',
      },
    ])
    await page.screenshot({ path: '/tmp/webhooks.png', fullPage: true })
    hookId = body.items[0].id
    hookUrl = `${hooksUrl}/${hookId}`
    const row = page.locator(`#webhook-${hookId}`)
    expect(await row.getByRole('link').textContent()).toBe(endpointUrl)
    expect(await row.textContent()).toContain('Billing <service>')
    expect(await row.textContent()).toContain('user.created, session.started')
    expect(await row.locator('.badge').textContent()).toBe('active')
    expect(await row.locator('td').nth(3).textContent()).toBe('—')
    // The form is empty again.
    expect(await page.getByLabel('Endpoint URL').inputValue()).toBe('')
    expect(await page.getByLabel('user.created').isChecked()).toBe(false)
  })

  it('after a reload lists the endpoint but shows its secret nowhere', async () => {
    const res = await page.reload()
    const served = await res!.text()
    await page.locator(`#webhook-${hookId}`).waitFor()
    await expect(page.locator('#webhook-secret').count()).resolves.toBe(0)
    for (const text of [served, await page.content()]) {
      expect(text).toContain(hookId)
      expect(text).not.toContain(secrets[0]!)
      expect(text).not.toContain('whsec_')
    }
  })

  it('shows a viewer no endpoint and no form, and refuses them the endpoint pages', async () => {
    // Before the clock turns: the sign-in reads the real time beside it.
    const viewer = await signUpUser(server, viewerUser)
    const now = server.core.clock.now()
    await server.core.db
      .insert(workspaceMembers)
      .values({ workspaceId: ws, accountId: viewer.id, role: 'viewer', createdAt: now, updatedAt: now })
    const { context, page: p, errors: viewerErrors } = await signedInPage(server.baseUrl, viewerUser)
    try {
      const res = await p.goto(hooksUrl)
      expect(res!.status()).toBe(200)
      await p.getByText('Webhooks are managed by members who can change this workspace').waitFor()
      const html = await p.content()
      expect(html).not.toContain(hookId)
      expect(html).not.toContain(endpointUrl)
      await expect(p.locator('#webhook-create').count()).resolves.toBe(0)
      await expect(p.locator('[hx-post], [hx-delete]').count()).resolves.toBe(0)
      expect((await p.goto(`${hooksUrl}/${hookId}`))!.status()).toBe(403)
      expect(await p.content()).not.toContain(endpointUrl)
    } finally {
      await context.close()
    }
    expect((await viewer.agent.request(`/app/workspaces/${ws}/settings/webhooks/${hookId}`)).status).toBe(403)
    expect(viewerErrors).toEqual([])
  })

  it('sends a test event, delivered and in the log after the jobs ran', async () => {
    await page.locator(`#webhook-${hookId}`).getByRole('link').click()
    await page.waitForURL(hookUrl)
    await page.getByText('No deliveries yet').waitFor()
    expect(await page.locator('#delivery-count').textContent()).toBe('0 deliveries')
    await act('Send test')
    expect(await page.locator('#webhook-done').textContent()).toMatch(
      /^Test event evt_[0-9A-Z]{26} queued\.$/,
    )
    // The log's count is redrawn with it (issue 57: counters follow an add without a reload).
    expect(await page.locator('#delivery-count').textContent()).toBe('1 delivery')
    expect(await cell(logRow(page), 0).textContent()).toContain('webhook.test')
    expect(await logRow(page).locator('.badge').textContent()).toBe('queued')

    await runJobs()
    const [got] = receiver.to(endpointUrl)
    expect(got?.body).toMatchObject({ type: 'webhook.test', workspace_id: ws, data: { webhook_id: hookId } })
    expect(verifySignature(secrets[0]!, got!.signature, got!.raw, Math.floor(clock.now() / 1000))).toBe(true)

    await page.reload()
    const row = logRow(page)
    expect(await row.locator('.badge').textContent()).toBe('delivered')
    expect(await cell(row, 0).textContent()).toContain(got!.webhookId!)
    expect(await cell(row, 2).textContent()).toBe('1')
    expect(await cell(row, 3).textContent()).toBe('200')
    expect(await row.locator('pre.response').textContent()).toBe('ok')
    expect(await page.locator('#webhook-success').textContent()).toBe('100%')
    await expect(page.locator('#delivery-rows tr').count()).resolves.toBe(1)
  })

  it('shows an attempt the receiver answered 500 as failed, with its code and answer', async () => {
    receiver.respond(endpointUrl, () => new Response('<b>down</b> for maintenance', { status: 500 }))
    await act('Send test')
    await runJobs()
    await page.reload()
    const row = logRow(page)
    expect(await row.locator('.badge').textContent()).toBe('retrying')
    expect(await cell(row, 2).textContent()).toBe('1')
    expect(await cell(row, 3).textContent()).toBe('500')
    expect(await cell(row, 4).textContent()).toContain('The endpoint answered 500')
    // The receiver's answer is text on the page, never markup.
    expect(await row.locator('pre.response').textContent()).toBe('<b>down</b> for maintenance')
    await expect(row.locator('pre.response b').count()).resolves.toBe(0)
    expect(await cell(row, 5).textContent()).toContain('next try')
    expect(await page.locator('#webhook-success').textContent()).toBe('50%')
    await page.screenshot({ path: '/tmp/webhook-endpoint.png', fullPage: true })

    await page.goto(hooksUrl)
    expect(await page.locator(`#webhook-${hookId} td`).nth(3).textContent()).toBe('50%')
    await page.goBack()
  })

  it('pauses the endpoint after a day down; Reactivate sends what waited, failed for good after 48 h', async () => {
    const firstFailure = clock.now()
    // The retries up to a day: the endpoint pauses at the 24 h one; the 48 h one then waits.
    for (const offset of RETRY_OFFSETS) {
      clock.set(firstFailure + offset)
      await runJobs()
    }
    expect(receiver.to(endpointUrl)).toHaveLength(2 + 7)
    await page.reload()
    expect(await page.locator('#webhook-status .badge').textContent()).toBe('paused')
    expect(await logRow(page).locator('.badge').textContent()).toBe('retrying')
    expect(await cell(logRow(page), 2).textContent()).toBe('8')

    await act('Reactivate')
    expect(await page.locator('#webhook-done').textContent()).toBe(
      'Reactivated: the deliveries that waited are being sent.',
    )
    expect(await page.locator('#webhook-status .badge').textContent()).toBe('active')
    await expect(
      page.locator('#webhook-actions').getByRole('button', { name: 'Reactivate' }).count(),
    ).resolves.toBe(0)
    await runJobs()
    expect(receiver.to(endpointUrl)).toHaveLength(2 + 8)
    await page.reload()
    expect(await logRow(page).locator('.badge').textContent()).toBe('failed_permanent')
    expect(await cell(logRow(page), 2).textContent()).toBe('9')
  })

  it('lists the delivery under Failed, and Redeliver brings it through', async () => {
    await page.getByRole('link', { name: 'Failed' }).click()
    await page.waitForURL(`${hookUrl}?status=failed`)
    expect(await page.getByRole('link', { name: 'Failed' }).getAttribute('aria-current')).toBe('page')
    await expect(page.locator('#delivery-rows tr').count()).resolves.toBe(1)
    const failed = logRow(page)
    expect(await failed.locator('.badge').textContent()).toBe('failed_permanent')
    const deliveryId = ((await failed.getAttribute('id')) ?? '').replace(/^delivery-/, '')
    expect(deliveryId).toMatch(/^dlv_[0-9A-Z]{26}$/)

    receiver.respond(endpointUrl, 200)
    await act(/^Redeliver/, failed)
    expect(await page.locator('#webhook-done').textContent()).toMatch(
      /^Delivery of webhook\.test \(evt_\w+\) queued again\.$/,
    )
    // Still on the Failed tab, which it has left.
    await page.getByText('No delivery failed for good').waitFor()
    await runJobs()
    expect(receiver.to(endpointUrl)).toHaveLength(2 + 9)

    await page.getByRole('link', { name: 'All' }).click()
    await page.waitForURL(hookUrl)
    const row = page.locator(`#delivery-${deliveryId}`)
    expect(await row.locator('.badge').textContent()).toBe('delivered')
    expect(await cell(row, 2).textContent()).toBe('10')
    expect(await cell(row, 3).textContent()).toBe('200')
    const api = await json(owner.agent, 'GET', `/v1/workspaces/${ws}/webhooks/${hookId}/deliveries`)
    expect((api.body.items as Json[]).map((d) => d.status)).toEqual(['delivered', 'delivered'])
  })

  it('rotates the secret after a confirmation: a new one shown once, both signing for a day', async () => {
    const asked = confirmations.length
    await act('Rotate secret')
    expect(confirmations.slice(asked)).toEqual([
      `Rotate the signing secret of ${endpointUrl}? The old secret keeps signing beside the new one for 24 hours.`,
    ])
    const fresh = (await page.locator('#webhook-secret code[title="Signing secret"]').textContent()) ?? ''
    expect(fresh).toMatch(SECRET)
    expect(fresh).not.toBe(secrets[0])
    secrets.push(fresh)
    expect(await page.locator('#webhook-secret').textContent()).toContain('it will not be shown again')

    await act('Send test')
    await runJobs()
    const last = receiver.to(endpointUrl).at(-1)!
    expect(parseSignature(last.signature)?.v1).toHaveLength(2)
    for (const secret of secrets)
      expect(verifySignature(secret, last.signature, last.raw, Math.floor(clock.now() / 1000))).toBe(true)

    const res = await page.reload()
    const served = await res!.text()
    for (const secret of secrets) expect(served).not.toContain(secret)
    await expect(page.locator('#webhook-secret').count()).resolves.toBe(0)
  })

  it('disables the endpoint after a confirmation and enables it again', async () => {
    const asked = confirmations.length
    await act('Disable')
    expect(confirmations.slice(asked)).toEqual([
      `Disable ${endpointUrl}? Events that happen while it is disabled are not sent to it.`,
    ])
    expect(await page.locator('#webhook-status .badge').textContent()).toBe('disabled')
    expect((await listed()).items[0]).toMatchObject({ enabled: false, status: 'disabled' })
    await act('Enable')
    expect(await page.locator('#webhook-status .badge').textContent()).toBe('active')
    expect((await listed()).items[0]).toMatchObject({ enabled: true, status: 'active' })
  })

  it('deletes the endpoint after a confirmation, back on an empty list', async () => {
    const asked = confirmations.length
    await page.locator('#webhook-actions').getByRole('button', { name: 'Delete' }).click()
    await page.waitForURL(hooksUrl)
    expect(confirmations.slice(asked)).toEqual([
      `Delete ${endpointUrl}? Its deliveries and their log go with it.`,
    ])
    await page.getByText('No webhook endpoints yet').waitFor()
    expect((await listed()).total).toBe(0)
    expect(errors).toEqual([])
  })
})
