import { Elysia } from 'elysia'
import { Layout } from '../../shared/views/hosted-layout'

/** Where the platform instance sends the browser after logout (a registered post-logout URI). */
export const authPages = () =>
  new Elysia({ name: 'auth-pages' }).get(
    '/app/signed-out',
    ({ set }) => {
      set.headers['content-type'] = 'text/html; charset=utf-8'
      return (
        <Layout title="Signed out">
          <h1>You are signed out</h1>
          <p class="sub">Your Gatehouse session has ended.</p>
          <p>
            <a href="/v1/auth/login">Sign in again</a>
          </p>
        </Layout>
      )
    },
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
