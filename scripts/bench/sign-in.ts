// One hosted password sign-in of a workspace instance, as a browser does it over plain HTTP with a
// cookie jar of its own (tests/support/browserless.ts): the authorization request, the sign-in page,
// the form post, the resume, and the redirect to the app with a code, which is not followed.
import { createHash, randomBytes } from 'node:crypto'
import { Agent } from '../../tests/support/browserless'

export interface SignInTarget {
  /** The server's origin (`http://127.0.0.1:<port>`). */
  origin: string
  /** The instance's issuer (`{origin}/i/<workspace id>`). */
  issuer: string
  clientId: string
  /** Registered for the app; nothing serves it: the final redirect to it is only read. */
  redirectUri: string
}

/** What one flow did: null when it ended with a code, else what went wrong; and its steps. */
export interface SignInOutcome {
  problem: string | null
  /** `GET /auth 303`, … : the shape of the flow, for the bench to print once. */
  steps: string[]
}

const isRedirect = (status: number) => status >= 300 && status < 400
const unescapeAmp = (s: string) => s.replace(/&amp;/g, '&')

/** The last path segments of a URL below the issuer, ids elided, for the printed shape. */
function shape(url: URL, issuer: string): string {
  const path = url.href.startsWith(issuer)
    ? url.pathname.slice(new URL(issuer).pathname.length)
    : url.pathname
  return path.replace(/\/(interaction|auth)\/[A-Za-z0-9_-]+/, '/$1/<uid>')
}

/**
 * {issuer}/auth of the code flow with PKCE S256 (a fresh verifier, never needed: nobody redeems the
 * code) and `state`, as the app `target` names sends a browser there.
 */
export function authorizeUrl(target: Omit<SignInTarget, 'origin'>, state: string): URL {
  const auth = new URL(`${target.issuer}/auth`)
  auth.search = new URLSearchParams({
    client_id: target.clientId,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: target.redirectUri,
    code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
    code_challenge_method: 'S256',
    state,
  }).toString()
  return auth
}

/**
 * Runs one sign-in of `email` with `password`: GET {issuer}/auth (code flow, PKCE S256, a state) →
 * 303 to the interaction → GET the sign-in page (200, its form) → POST the form to …/login (303 to
 * the resume) → GET the resume → 303 to the redirect URI carrying `code=` and the state.
 */
export async function signInOnce(
  target: SignInTarget,
  email: string,
  password: string,
): Promise<SignInOutcome> {
  const agent = new Agent(target.origin)
  const steps: string[] = []
  const fail = (problem: string): SignInOutcome => ({ problem, steps })
  const state = randomBytes(12).toString('base64url')
  const auth = authorizeUrl(target, state)

  // 1. The authorization request: a redirect to the interaction.
  const authorized = await agent.request(auth)
  await authorized.body?.cancel()
  steps.push(`GET /auth ${authorized.status}`)
  const toInteraction = authorized.headers.get('location')
  if (!isRedirect(authorized.status) || !toInteraction?.includes('/interaction/'))
    return fail(
      `GET /auth: HTTP ${authorized.status} to ${toInteraction ?? 'nowhere'} (want a redirect to the interaction)`,
    )

  // 2. The sign-in page and its form.
  const pageUrl = new URL(toInteraction, auth)
  const page = await agent.request(pageUrl)
  const html = await page.text()
  steps.push(`GET ${shape(pageUrl, target.issuer)} ${page.status}`)
  if (page.status !== 200) return fail(`GET the sign-in page: HTTP ${page.status}: ${html.slice(0, 160)}`)
  const form = [...html.matchAll(/<form\b[^>]*\baction="([^"]*\/login)"[^>]*>([\s\S]*?)<\/form>/g)][0]
  if (!form) return fail('the sign-in page has no form posting to …/login')
  // Every field the form carries (a hidden one a later page may add too), then the credentials.
  const fields = new URLSearchParams()
  for (const input of form[2]!.matchAll(/<input\b([^>]*)>/g)) {
    const name = /\bname="([^"]+)"/.exec(input[1]!)?.[1]
    const value = /\bvalue="([^"]*)"/.exec(input[1]!)?.[1]
    if (name && value !== undefined) fields.set(name, unescapeAmp(value))
  }
  fields.set('email', email)
  fields.set('password', password)

  // 3. The form post: a redirect to the resume.
  const actionUrl = new URL(unescapeAmp(form[1]!), pageUrl)
  const posted = await agent.request(actionUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
  })
  const postedBody = await posted.text()
  steps.push(`POST ${shape(actionUrl, target.issuer)} ${posted.status}`)
  const toResume = posted.headers.get('location')
  if (!isRedirect(posted.status) || !toResume)
    return fail(`POST …/login: HTTP ${posted.status}: ${postedBody.replace(/\s+/g, ' ').slice(0, 200)}`)

  // 4. The resume: a redirect to the app with a code.
  const resumeUrl = new URL(toResume, actionUrl)
  if (!resumeUrl.href.startsWith(`${target.issuer}/auth/`))
    return fail(`POST …/login redirected to ${shape(resumeUrl, target.issuer)}, not the resume`)
  const resumed = await agent.request(resumeUrl)
  await resumed.body?.cancel()
  steps.push(`GET ${shape(resumeUrl, target.issuer)} ${resumed.status}`)
  const toApp = resumed.headers.get('location')
  if (!isRedirect(resumed.status) || !toApp)
    return fail(`GET the resume: HTTP ${resumed.status} (want a redirect to the app)`)
  const final = new URL(toApp, resumeUrl)
  if (`${final.origin}${final.pathname}` !== target.redirectUri)
    return fail(`the resume redirected to ${shape(final, target.issuer)}, not the redirect URI`)
  steps.push('redirect URI')
  if (final.searchParams.get('error'))
    return fail(
      `redirect URI with error=${final.searchParams.get('error')}: ${final.searchParams.get('error_description')}`,
    )
  if (!final.searchParams.get('code')) return fail('redirect URI without code')
  if (final.searchParams.get('state') !== state) return fail('redirect URI with another state')
  steps[steps.length - 1] = 'redirect URI with code'
  return { problem: null, steps }
}
