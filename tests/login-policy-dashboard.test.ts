import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { sharedBrowser } from './support/browser'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser, waitForState } from './support/users'

let server: TestServer
let owner: PlatformUser
let ws: string
const user = { email: 'policy-admin@example.com', password: 'policy-admin-pass-1', name: 'Policy Admin' }

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, user)
  const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Policy Form' })
  ws = String((await waitForState(owner.agent, created.body.id, 'active')).id)
})
afterAll(() => server.stop())

const policy = async () => (await json(owner.agent, 'GET', `/v1/workspaces/${ws}/login-policy`)).body

describe('settings/login-policy in headless Chromium', () => {
  it('saves the full form (an unticked checkbox is false), shows errors inline and keeps the stored policy', async () => {
    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${server.baseUrl}/v1/auth/login`)
    await page.getByLabel('Email').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/app\//)

    // Reached from the workspace's settings.
    await page.goto(`${server.baseUrl}/app/workspaces/${ws}/settings`)
    await page.getByRole('link', { name: 'Login policy' }).click()
    await page.waitForURL(`${server.baseUrl}/app/workspaces/${ws}/settings/login-policy`)
    await page.getByRole('heading', { name: 'Login policy' }).waitFor()
    expect(await page.getByLabel('Allow sign-up').isChecked()).toBe(true)
    expect(await page.getByLabel('Require a verified email').isChecked()).toBe(true)
    expect(await page.getByLabel('Minimum password length').inputValue()).toBe('8')
    await page.evaluate(() => {
      ;(window as unknown as { marker: number }).marker = 7
    })

    await page.getByLabel('Allow sign-up').uncheck()
    await page.getByLabel('Minimum password length').fill('12')
    await page.getByLabel('Multi-factor authentication').selectOption('optional')
    await page.getByRole('button', { name: 'Save login policy' }).click()
    await page.getByText('Login policy saved.').waitFor()
    expect(await policy()).toEqual({
      allow_password: true,
      allow_registration: false,
      allow_external_idps: true,
      require_email_verification: true,
      mfa: 'optional',
      password_min_length: 12,
      lockout_threshold: 5,
      lockout_minutes: 15,
      session_lifetime_hours: 168,
    })

    // A value out of range: the message sits next to its field, the value stays as typed, nothing is saved.
    await page.getByLabel('Minimum password length').fill('7')
    await page.getByLabel('Lock for').fill('soon')
    await page.getByRole('button', { name: 'Save login policy' }).click()
    await page.locator('#policy-password-min-length-error').waitFor()
    expect(await page.locator('#policy-password-min-length-error').textContent()).toBe(
      'Use a number from 8 to 128.',
    )
    expect(await page.locator('#policy-lockout-minutes-error').textContent()).toBe(
      'Enter a whole number from 1 to 1440.',
    )
    expect(await page.getByLabel('Minimum password length').inputValue()).toBe('7')
    expect(await page.getByLabel('Allow sign-up').isChecked()).toBe(false)
    expect((await policy()).password_min_length).toBe(12)

    // Unticking every checkbox saves them all false.
    await page.getByLabel('Minimum password length').fill('10')
    await page.getByLabel('Lock for').fill('30')
    for (const label of [
      'Allow password sign-in',
      'Allow external identity providers',
      'Require a verified email',
    ])
      await page.getByLabel(label).uncheck()
    await page.getByRole('button', { name: 'Save login policy' }).click()
    await page.getByText('Login policy saved.').waitFor()
    expect(await policy()).toMatchObject({
      allow_password: false,
      allow_registration: false,
      allow_external_idps: false,
      require_email_verification: false,
      password_min_length: 10,
      lockout_minutes: 30,
    })
    // Swapped in place by htmx: the same document throughout.
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(7)
    await page.reload()
    expect(await page.getByLabel('Allow password sign-in').isChecked()).toBe(false)
    expect(await page.getByLabel('Lock for').inputValue()).toBe('30')
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)
})
