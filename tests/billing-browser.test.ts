// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { ManualClock } from '../src/shared/clock'
import { settled, sharedBrowser, signedInPage, signUpInBrowser } from './support/browser'
import { activeWorkspace, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import { authorizeUrl } from './support/sign-in'
import { type StripeStandIn, startStripeStandIn } from './support/stripe-stand-in'
import { signUpUser } from './support/users'

// The dashboard's billing page in headless Chromium (SPEC "Dashboard routes"): checkout and the
// portal send the browser to Stripe's hosted pages (HX-Redirect), a scheduled downgrade shows its
// banner after the reload and is released, the cap form saves; then the hosted sign-up page of a
// workspace over Free's included MAU refuses new users while existing ones sign in, until the
// clock turns to the next month.
const clock = new ManualClock(Date.now())
const RP = 'https://rp.example.com/cb'
let stripe: StripeStandIn
let server: TestServer
const owner = { email: 'billing-owner@example.com', password: 'an owner password', name: 'Owner' }

beforeAll(async () => {
  stripe = startStripeStandIn(() => clock.now())
  server = await startTestServer({ ...stripe.env, BILLING_FREE_INCLUDED_MAU: '2' }, undefined, { clock })
  stripe.deliverTo = `${server.baseUrl}/v1/webhooks/payments`
})
afterAll(async () => {
  await server.stop()
  stripe.stop()
})

/** Stripe's hosted pages and the app's redirect URI are not on this machine: answered here. */
async function fakeOutside(context: BrowserContext) {
  await context.route('https://checkout.stripe.test/**', (r) => r.fulfill({ body: 'Stripe Checkout' }))
  await context.route('https://billing.stripe.test/**', (r) => r.fulfill({ body: 'Stripe customer portal' }))
  await context.route(`${RP}**`, (r) => r.fulfill({ body: 'the app' }))
}

describe('the billing page', () => {
  it('upgrades through checkout, schedules a downgrade (banner after reload), releases it, saves the cap, opens the portal', async () => {
    const me = await signUpUser(server, owner)
    const ws = await activeWorkspace(server.core, me.id)
    const { context, page, errors } = await signedInPage(server.baseUrl, owner)
    await fakeOutside(context)
    const billing = `${server.baseUrl}/app/workspaces/${ws}/billing`

    await page.goto(`${server.baseUrl}/app/workspaces/${ws}`)
    await page.getByRole('link', { name: 'Billing' }).click()
    await page.waitForURL(billing)
    expect(await page.locator('#billing-plan-name').textContent()).toBe('Free')

    await page.getByRole('button', { name: 'Upgrade to Pro' }).click()
    await page.waitForURL(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/)
    await stripe.completeCheckout(page.url().split('/').at(-1)!)

    await page.goto(billing)
    expect(await page.locator('#billing-plan-name').textContent()).toBe('Pro')
    await page.getByLabel('Downgrade at the end of the period to').selectOption('free')
    await page.getByRole('button', { name: 'Schedule downgrade' }).click()
    await page.locator('#scheduled-switch').waitFor()
    expect(await page.locator('#scheduled-switch').textContent()).toContain('switches to Free on')

    await page.getByRole('button', { name: 'Keep Pro' }).click()
    await page.waitForLoadState()
    await page.getByRole('button', { name: 'Schedule downgrade' }).waitFor()
    expect(await page.locator('#scheduled-switch').count()).toBe(0)

    await page.getByLabel('Overage spending cap (cents)').fill('-5')
    await page.getByRole('button', { name: 'Save cap' }).click()
    await page.getByText('Some fields need attention.').waitFor()
    await settled(page)
    await page.getByLabel('Overage spending cap (cents)').fill('500')
    await page.getByRole('button', { name: 'Save cap' }).click()
    await page.getByText('Cap saved: it applies from next month on.').waitFor()

    await page.getByRole('button', { name: 'Manage billing' }).click()
    await page.waitForURL(/^https:\/\/billing\.stripe\.test\/p\/session\/bps_/)
    expect(errors).toEqual([])
    await context.close()
  })
})

describe("a workspace at Free's included MAU", () => {
  /** A fresh browser at the workspace's hosted sign-in page for its app. */
  async function atSignIn(ws: string, clientId: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await (await sharedBrowser()).newContext()
    await fakeOutside(context)
    const page = await context.newPage()
    await page.goto((await authorizeUrl(server, ws, clientId, RP)).href)
    return { context, page }
  }

  it('refuses new users with a clear message while existing users sign in; the next month takes them again', async () => {
    const ws = await activeWorkspace(server.core)
    const app = await registerApp(server.core, ws, { type: 'spa', redirectUris: [RP] })
    const user = (n: number) => ({ email: `end-${n}@example.com`, password: 'an end user password' })
    for (const n of [1, 2]) {
      const { context, page } = await atSignIn(ws, app.clientId)
      await signUpInBrowser(page, user(n))
      await page.waitForURL(`${RP}**`)
      await context.close()
    }

    const refused = await atSignIn(ws, app.clientId)
    await refused.page.getByRole('link', { name: 'Create an account' }).click()
    await refused.page.getByText('Sign-up is paused').waitFor()
    expect(await refused.page.textContent('body')).toContain('reached its limit of monthly active users')
    await refused.context.close()

    const existing = await atSignIn(ws, app.clientId)
    await existing.page.getByLabel('Email').fill(user(1).email)
    await existing.page.getByLabel('Password').fill(user(1).password)
    await existing.page.getByRole('button', { name: 'Sign in' }).click()
    await existing.page.waitForURL(`${RP}**`)
    await existing.context.close()

    const now = new Date(clock.now())
    clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 5))
    const nextMonth = await atSignIn(ws, app.clientId)
    await signUpInBrowser(nextMonth.page, user(3))
    await nextMonth.page.waitForURL(`${RP}**`)
    await nextMonth.context.close()
  })
})
