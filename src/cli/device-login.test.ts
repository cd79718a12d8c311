// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { ApiClient } from './api'
import { deviceLogin } from './device-login'
import { CliError, EXIT } from './exit-codes'

// RFC 8628 §3.5 on the client's side: poll every `interval` seconds, 5 more after each slow_down,
// and stop at denied or expired. The server's side (its slow_down) is tests/device-polling.test.ts.

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const ACCESS_TOKEN = `${b64({ alg: 'ES256' })}.${b64({ iss: 'http://gh.test/i/platform', client_id: 'cli' })}.sig`

/** The control plane's device routes answering `polls` in turn; records the waits between them. */
function flow(polls: Record<string, unknown>[]) {
  const waits: number[] = []
  let clock = 0
  const fetch = (async (url: string) =>
    Response.json(
      String(url).endsWith('/start')
        ? {
            device_code: 'dc',
            user_code: 'ABCD-EFGH',
            verification_uri: 'http://gh.test/device',
            verification_uri_complete: 'http://gh.test/device?user_code=ABCD-EFGH',
            expires_in: 600,
            interval: 5,
          }
        : polls.shift(),
    )) as unknown as typeof globalThis.fetch
  const said: string[] = []
  const login = deviceLogin({
    api: new ApiClient({ baseUrl: 'http://gh.test', auth: null, fetch }),
    say: (text) => said.push(text),
    openBrowser: () => {},
    sleep: async (ms) => {
      waits.push(ms)
      clock += ms
    },
    now: () => clock,
  })
  return { login, waits, said }
}

describe('deviceLogin', () => {
  it('waits the interval between polls, 5 s more after each slow_down, until complete', async () => {
    const { login, waits, said } = flow([
      { status: 'pending' },
      { status: 'slow_down' },
      { status: 'pending' },
      { status: 'slow_down' },
      { status: 'complete', access_token: ACCESS_TOKEN, refresh_token: 'rt', expires_in: 3600 },
    ])
    expect(await login).toMatchObject({
      access_token: ACCESS_TOKEN,
      refresh_token: 'rt',
      issuer: 'http://gh.test/i/platform',
      client_id: 'cli',
      expires_at: 45_000 + 3_600_000,
    })
    expect(waits).toEqual([5000, 5000, 10_000, 10_000, 15_000])
    expect(said[0]).toBe('To sign in, open http://gh.test/device and enter the code: ABCD-EFGH')
  })

  it('stops with exit 3 when the person denies, or the code expires', async () => {
    for (const status of ['denied', 'expired']) {
      const error = await flow([{ status: 'pending' }, { status }]).login.catch((e) => e)
      expect(error).toBeInstanceOf(CliError)
      expect(error.exitCode).toBe(EXIT.NOT_AUTHENTICATED)
    }
  })
})
