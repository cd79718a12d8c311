import * as oidc from 'openid-client'
import { signUp } from '../../src/identity'
import { Agent } from './browserless'
import { activeWorkspace, registerApp } from './instances'
import type { TestServer } from './server'

/** An authorization request (code, PKCE) of `clientId` at workspace `ws`: where a sign-in starts. */
export async function authorizeUrl(server: TestServer, ws: string, clientId: string, redirectUri: string) {
  const url = new URL(`${server.baseUrl}/i/${ws}/auth`)
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  }).toString()
  return url
}

/**
 * A fresh browser (an Agent) standing at the hosted sign-in form of an authorization request of
 * `clientId` at workspace `ws`; `post` submits that form with an email and a password.
 */
export async function openSignInForm(server: TestServer, ws: string, clientId: string, redirectUri: string) {
  const agent = new Agent(server.baseUrl)
  const page = await agent.follow(await authorizeUrl(server, ws, clientId, redirectUri))
  const html = await page.res.text()
  const action = /<form method="post" action="([^"]*\/login)"/.exec(html)?.[1]
  if (!action) throw new Error(`no sign-in form on:\n${html.slice(0, 500)}`)
  const post = (email: string, password: string, headers: Record<string, string> = {}) =>
    agent.request(new URL(action, page.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ email, password }).toString(),
    })
  return { agent, post, action: new URL(action, page.url) }
}

/**
 * A workspace of its own (throttle keys are per instance) with one password account, and an
 * authorization request standing at its hosted sign-in form. `post` submits that form; it may be
 * called many times, also at once, since a wrong password leaves the interaction open.
 */
export async function signInForm(
  server: TestServer,
  account = { email: 'ada@example.com', password: 'correct horse battery' },
) {
  const ws = await activeWorkspace(server.core)
  await signUp(server.core, ws, account)
  const redirectUri = 'https://rp.example.com/cb'
  const app = await registerApp(server.core, ws, { type: 'spa', redirectUris: [redirectUri] })
  const { post } = await openSignInForm(server, ws, app.clientId, redirectUri)
  return { ws, account, post }
}
