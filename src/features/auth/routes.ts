import { type Cookie, Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import type { IdentityPlane } from '../../identity'
import { clientAddress } from '../../shared/client-address'
import { AppError } from '../../shared/errors'
import { html } from '../../shared/views/respond'
import type { Workspace } from '../workspaces/service'
import { LOGIN_COOKIE_PATH, loginCookieName, parseLoginCookie, serializeLoginCookie } from './login-binding'
import { AuthModel } from './model'
import { loginFailedPage } from './pages'
import { createAuthService } from './service'
import { destroySession, LOGIN_REQUEST_TTL_MS, SESSION_TTL_MS, sessionCookieName } from './sessions'

const tags = ['auth']

const wantsHtml = (request: Request) => (request.headers.get('accept') ?? '').includes('text/html')

/** SPEC "Authentication flow": dashboard login through the platform instance, and the device flow. */
export function authRoutes(core: Core, auth: AuthPlugin<Workspace>, identity: IdentityPlane) {
  const service = createAuthService({ core, identity })
  const cookieName = sessionCookieName(core)
  const secure = core.config.baseUrl.startsWith('https:')
  const loginCookie = loginCookieName(core)

  /** The browser's pending login secrets; none left clears the cookie. */
  const setLoginCookie = (jar: Cookie<unknown>, pending: string[]) =>
    jar.set({
      value: serializeLoginCookie(pending),
      httpOnly: true,
      sameSite: 'lax',
      secure,
      path: LOGIN_COOKIE_PATH,
      maxAge: pending.length ? LOGIN_REQUEST_TTL_MS / 1000 : 0,
    })

  return new Elysia({ name: 'auth-routes', prefix: '/v1/auth' })
    .use(auth)
    .get(
      '/login',
      async ({ query, cookie, redirect }) => {
        const jar = cookie[loginCookie]!
        const started = await service.startLogin({
          idpHint: query.idp_hint,
          next: query.next,
          pending: parseLoginCookie(jar.value),
        })
        setLoginCookie(jar, started.pending)
        return redirect(started.url, 302)
      },
      {
        query: AuthModel.loginQuery,
        detail: { tags, summary: 'Start the OIDC login (redirects to the identity provider)' },
      },
    )
    .get(
      '/callback',
      async ({ query, cookie, redirect, request }) => {
        const jar = cookie[loginCookie]!
        try {
          const taken = await service.takeLoginRequest(query.state, parseLoginCookie(jar.value))
          // Spent at once, whatever happens next: the browser forgets the secret of this login.
          setLoginCookie(jar, taken.pending)
          const { session, redirect: to } = await service.finishLogin(taken.request, query)
          cookie[cookieName]!.set({
            value: session.cookie,
            httpOnly: true,
            sameSite: 'lax',
            secure,
            path: '/',
            maxAge: SESSION_TTL_MS / 1000,
          })
          return redirect(to, 303)
        } catch (e) {
          // A person in a browser lands here: a page to start again, not a JSON body.
          if (e instanceof AppError && e.status === 400 && wantsHtml(request)) {
            return html(loginFailedPage(e.message), 400, { 'cache-control': 'no-store' })
          }
          throw e
        }
      },
      {
        query: AuthModel.callbackQuery,
        detail: { tags, summary: 'OIDC callback: exchanges the code and sets the session' },
      },
    )
    .post(
      '/logout',
      async ({ request, cookie, body, principalOf, set }) => {
        const principal = await principalOf({ request, cookie, body })
        const url = service.logoutUrl(principal?.session?.idToken() ?? null)
        if (principal?.session) await destroySession(core, principal.session.idHash)
        cookie[cookieName]!.set({ value: '', httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: 0 })
        if (request.headers.get('hx-request')) {
          set.headers['hx-redirect'] = url
          return { logout_url: url }
        }
        if ((request.headers.get('accept') ?? '').includes('application/json')) return { logout_url: url }
        set.status = 303
        set.headers.location = url
        return { logout_url: url }
      },
      { detail: { tags, summary: 'End the session here and at the identity provider' } },
    )
    .get(
      '/me',
      ({ principal }) =>
        principal.kind === 'key'
          ? {
              kind: 'machine_key' as const,
              id: principal.key.id,
              workspace_id: principal.key.workspaceId,
              scopes: principal.key.scopes,
              auth: principal.via,
            }
          : {
              kind: 'user' as const,
              id: principal.account.id,
              email: principal.account.email,
              email_verified: principal.account.emailVerified,
              name: principal.account.name,
              is_platform_admin: principal.account.isPlatformAdmin,
              auth: principal.via,
              // Session callers need it for mutations (X-CSRF-Token); bearer callers have no CSRF exposure.
              ...(principal.session ? { csrf_token: principal.session.csrfToken } : {}),
            },
      {
        caller: true,
        response: AuthModel.me,
        detail: { tags, summary: 'The current caller: a person, or the machine key of the token' },
      },
    )
    .post(
      '/device/start',
      ({ request, server }) =>
        service.startDevice(clientAddress(request, server, core.config.trustedProxies, core.warnings)),
      {
        response: AuthModel.deviceStart,
        detail: { tags, summary: 'Start the device authorization flow (RFC 8628)' },
      },
    )
    .post('/device/poll', ({ body }) => service.pollDevice(body.device_code), {
      body: AuthModel.devicePoll,
      response: AuthModel.devicePollResult,
      detail: { tags, summary: 'Poll the device flow; always 200 with a status' },
    })
}
