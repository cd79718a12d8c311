import { Elysia } from 'elysia'
import type { Core } from '../../core'
import { Layout } from '../../shared/views/hosted-layout'
import { html } from '../../shared/views/respond'

/** Where a new account goes once signed in: straight to creating its first workspace (SPEC login rule 3). */
const SIGNUP_NEXT = '/app/workspaces/new'

/**
 * The sign-up entry: one button per provider configured for the platform, each a login with its
 * `idp_hint` (straight to that provider) and `next` at the workspace-creation page, and the email
 * way in (the platform's sign-in page, which offers to create an account).
 */
function SignUpEntry({ core }: { core: Core }) {
  const login = (hint?: string) =>
    `/v1/auth/login?${new URLSearchParams({ ...(hint ? { idp_hint: hint } : {}), next: SIGNUP_NEXT })}`
  const named = core.config.idps.platform.filter((i) => i.type !== 'oidc')
  return (
    <Layout title="Create your Gatehouse account">
      <h1>Create your account</h1>
      <p class="sub">Then create your first workspace.</p>
      {named.length ? (
        <div class="idps">
          {named.map((i) => (
            <a href={login(i.type)} data-idp={i.type}>
              Sign up with <span safe>{i.name}</span>
            </a>
          ))}
        </div>
      ) : (
        ''
      )}
      <div class="idps">
        <a href={login()}>Sign up with email</a>
      </div>
      <div class="links">
        <a href="/v1/auth/login">I already have an account</a>
      </div>
    </Layout>
  )
}

/** Where the platform instance sends the browser after logout (a registered post-logout URI). */
export const authPages = (core: Core) =>
  new Elysia({ name: 'auth-pages' })
    .get('/app/signup', () => html(<SignUpEntry core={core} />), {
      detail: { tags: ['views'], summary: 'Sign-up entry page' },
    })
    .get(
      '/app/signed-out',
      () =>
        html(
          <Layout title="Signed out">
            <h1>You are signed out</h1>
            <p class="sub">Your Gatehouse session has ended.</p>
            <p>
              <a href="/v1/auth/login">Sign in again</a>
            </p>
          </Layout>,
        ),
      { detail: { tags: ['views'], summary: 'Signed-out page' } },
    )

/** What a browser sees when the callback refuses a sign-in: the reason and a way to start again. */
export const loginFailedPage = (message: string) =>
  (
    <Layout title="Sign-in failed">
      <h1>Sign-in failed</h1>
      <p class="sub" safe>
        {message}
      </p>
      <p>
        <a href="/v1/auth/login">Start again</a>
      </p>
    </Layout>
  ) as string
