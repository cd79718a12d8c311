// legs: once — pages in Chromium; the services behind them are tested on both stores by the API tests
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { sharedBrowser, signUpInBrowser } from './support/browser'
import { startTestServer, type TestServer } from './support/server'

let server: TestServer
const user = { email: 'linus@example.com', password: 'penguins-rule-1991', name: 'Linus' }

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

describe('in headless Chromium', () => {
  it('logs a dashboard user in through the hosted page and out of both sessions', async () => {
    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    await page.goto(`${server.baseUrl}/v1/auth/login`)
    await signUpInBrowser(page, { name: user.name, email: user.email, password: user.password })
    await page.waitForURL(`${server.baseUrl}/app/workspaces/new`)

    const cookies = await context.cookies(server.baseUrl)
    expect(cookies.find((c) => c.name === 'gh_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' })
    const me = await page.evaluate(async () => (await fetch('/v1/auth/me')).json())
    expect(me).toMatchObject({ email: user.email, auth: 'session' })

    // Log out the way the dashboard does: a form POST with the CSRF token.
    await page.evaluate((token) => {
      const form = document.createElement('form')
      form.method = 'post'
      form.action = '/v1/auth/logout'
      const input = Object.assign(document.createElement('input'), {
        type: 'hidden',
        name: '_csrf',
        value: token,
      })
      form.append(input)
      document.body.append(form)
      form.submit()
    }, me.csrf_token as string)
    await page.waitForURL(`${server.baseUrl}/app/signed-out`)
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor()
    expect((await page.evaluate(async () => (await fetch('/v1/auth/me')).status)) as number).toBe(401)
    await page.goto(`${server.baseUrl}/v1/auth/login`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await context.close()
  })

  it('completes the device flow: start over HTTP, approve at verification_uri, poll returns tokens the API accepts', async () => {
    const started = (await (
      await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
    ).json()) as {
      device_code: string
      user_code: string
      verification_uri: string
    }
    const poll = async () =>
      (await (
        await fetch(`${server.baseUrl}/v1/auth/device/poll`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ device_code: started.device_code }),
        })
      ).json()) as Record<string, string>
    expect((await poll()).status).toBe('pending')

    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    await page.goto(started.verification_uri)
    await page.getByLabel('Code').fill(started.user_code)
    await page.getByRole('button', { name: 'Continue' }).click()
    // The user checks the code shown on the device, allows it, then signs in.
    await page.getByText(started.user_code).waitFor()
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.getByLabel('Email').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Device connected' }).waitFor()

    const done = await poll()
    expect(done.status).toBe('complete')
    expect(done.access_token?.split('.')).toHaveLength(3)
    expect(done.refresh_token).toBeTruthy()
    const me = await fetch(`${server.baseUrl}/v1/auth/me`, {
      headers: { authorization: `Bearer ${done.access_token}` },
    })
    expect(me.status).toBe(200)
    expect(await me.json()).toMatchObject({ email: user.email, auth: 'bearer' })
    // A device code is single-use.
    expect((await poll()).status).not.toBe('complete')
    await context.close()
  })

  it('reports denied when the user refuses the device', async () => {
    const started = (await (
      await fetch(`${server.baseUrl}/v1/auth/device/start`, { method: 'POST' })
    ).json()) as {
      device_code: string
      verification_uri_complete: string
    }
    const context = await (await sharedBrowser()).newContext()
    const page = await context.newPage()
    await page.goto(started.verification_uri_complete)
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.waitForLoadState()
    const res = await fetch(`${server.baseUrl}/v1/auth/device/poll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_code: started.device_code }),
    })
    expect(await res.json()).toEqual({ status: 'denied' })
    await context.close()
  })
})
