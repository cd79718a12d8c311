import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync } from 'node:fs'
import { testApp } from './support/app'

// RFC 8628 §3.5: a client that polls faster than `interval` is told to slow down, at the instance's
// token endpoint and on the control plane's poll route. Time is the core's ManualClock.

let t: Awaited<ReturnType<typeof testApp>>

beforeAll(async () => {
  t = await testApp()
})
afterAll(() => rmSync(t.core.config.dataDir, { recursive: true, force: true }))

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

async function instancePost(path: string, form: Record<string, string>) {
  const res = await t.identity.fetch('platform', path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

async function controlPlane(path: string, body?: unknown) {
  const res = await t.app.handle(
    new Request(`http://localhost${path}`, {
      method: 'POST',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('the instance token endpoint (device_code grant)', () => {
  let deviceCode: string
  const poll = () =>
    instancePost('/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: 'gatehouse-cli' })

  it('announces the polling interval with the device authorization', async () => {
    const started = await instancePost('/device/auth', { client_id: 'gatehouse-cli', scope: 'openid' })
    deviceCode = String(started.body.device_code)
    expect(started.status).toBe(200)
    expect(started.body.interval).toBe(5)
  })

  it('answers slow_down to a second poll within the interval, pending once it has passed', async () => {
    expect(await poll()).toMatchObject({ status: 400, body: { error: 'authorization_pending' } })
    t.core.clock.advance(4_000)
    expect(await poll()).toMatchObject({ status: 400, body: { error: 'slow_down' } })
    t.core.clock.advance(1_000)
    expect(await poll()).toMatchObject({ status: 400, body: { error: 'authorization_pending' } })
    expect(await poll()).toMatchObject({ status: 400, body: { error: 'slow_down' } })
  })

  it('paces each device code on its own', async () => {
    const other = await instancePost('/device/auth', { client_id: 'gatehouse-cli', scope: 'openid' })
    const res = await instancePost('/token', {
      grant_type: DEVICE_GRANT,
      device_code: String(other.body.device_code),
      client_id: 'gatehouse-cli',
    })
    expect(res.body.error).toBe('authorization_pending')
  })
})

describe('POST /v1/auth/device/poll', () => {
  it('answers slow_down to a poll within the interval, pending after it', async () => {
    const started = await controlPlane('/v1/auth/device/start')
    expect(started.status).toBe(200)
    const poll = () => controlPlane('/v1/auth/device/poll', { device_code: started.body.device_code })
    expect(await poll()).toEqual({ status: 200, body: { status: 'pending' } })
    expect(await poll()).toEqual({ status: 200, body: { status: 'slow_down' } })
    t.core.clock.advance((started.body.interval as number) * 1000)
    expect(await poll()).toEqual({ status: 200, body: { status: 'pending' } })
  })
})
