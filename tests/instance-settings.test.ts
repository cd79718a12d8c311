import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import * as oidc from 'openid-client'
import { loginPolicies } from '../src/features/login-policy/schema'
import { issuerFor } from '../src/identity'
import { Agent } from './support/browserless'
import { activeWorkspace, clientCredentials, publicClient, registerApp } from './support/instances'
import { startTestServer, type TestServer } from './support/server'

// Issue 27: an instance's settings (login policy, external IdPs, brand) are read by its first hosted
// page or interaction, not when it is loaded: discovery, JWKS and tokens never need them, and an
// instance serving only those (an API's machine clients) never costs their reads. Seen from outside:
// a policy written straight into the store (no change is heard, so nothing is evicted) after the
// instance served discovery and tokens is the one its first page applies; from then on it is kept
// until a change is heard, like the rest of the instance.

const RP = 'https://rp.example.com'
let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

/** A workspace whose policy allows registration, with a web app (tokens) and an spa (sign-in). */
async function workspace() {
  const ws = await activeWorkspace(server.core, 'usr_owner', { allowRegistration: true })
  const web = await registerApp(server.core, ws, { type: 'web', redirectUris: [`${RP}/cb`] })
  const { config } = await publicClient(server.core, server.baseUrl, ws, `${RP}/cb`)
  const issuer = issuerFor(server.core.config, ws)
  const token = () => clientCredentials(issuer, web.clientId, web.clientSecret!)
  /** The hosted sign-in page of a fresh authorization request. */
  const signInPage = async () => {
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${RP}/cb`,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    })
    const page = await new Agent(server.baseUrl).follow(url, {}, (u) => u.href.startsWith(RP))
    const html = await page.res.text()
    expect(html).toContain('<h1>Sign in</h1>')
    return html
  }
  /** Writes the policy's registration switch behind the product's back: no node hears of it. */
  const writeRegistration = (allowRegistration: boolean) =>
    server.core.db.update(loginPolicies).set({ allowRegistration }).where(eq(loginPolicies.workspaceId, ws))
  return { ws, issuer, token, signInPage, writeRegistration }
}

describe("an instance's settings", () => {
  it('are read by its first page, not for discovery, JWKS or tokens, and kept from then on', async () => {
    const { ws, issuer, token, signInPage, writeRegistration } = await workspace()
    // The instance is loaded and serves its documents and tokens.
    expect((await fetch(`${issuer}/.well-known/openid-configuration`)).status).toBe(200)
    expect((await fetch(`${issuer}/jwks`)).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await token()).status).toBe(200)
    const held = server.identity.pool.held(ws)
    expect(held?.id).toBe(ws)
    // Its settings are not read yet: reading them is refused, not answered with something else.
    expect(() => held!.policy).toThrow('its settings are read before it serves a page')

    // Registration turned off in the store: the first page reads the policy as it is now.
    await writeRegistration(false)
    expect(await signInPage()).not.toContain('Create an account')
    expect(server.identity.pool.held(ws)).toBe(held)
    expect(held!.policy.allowRegistration).toBe(false)

    // Written back without a change heard: the instance keeps what its first page read.
    await writeRegistration(true)
    expect(await signInPage()).not.toContain('Create an account')
    expect((await token()).status).toBe(200)

    // A change heard (as every product write announces it) evicts the instance: read again.
    server.core.instances.changed(ws)
    await Bun.sleep(0)
    expect(await signInPage()).toContain('Create an account')
  })

  it('are read once for the pages that ask together', async () => {
    const { ws, token, signInPage } = await workspace()
    expect((await token()).status).toBe(200)
    const pool = server.identity.pool
    const instance = pool.held(ws)!
    const first = pool.settle(instance)
    expect(first).toBeInstanceOf(Promise)
    expect(pool.settle(instance)).toBe(first)
    await first
    expect(pool.settle(instance)).toBeUndefined()
    expect(instance.policy.allowRegistration).toBe(true)
    expect(await signInPage()).toContain('Create an account')
  })
})
