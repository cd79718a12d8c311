import type { ShellUser } from './layout'

/**
 * What a page's shell reads of its caller: access's `Principal` satisfies it (shared/ imports
 * nothing of access, ARCHITECTURE "walls").
 */
type ShellCaller =
  | {
      kind: 'user'
      account: { name: string; email: string; isPlatformAdmin: boolean }
      session?: { csrfToken: string }
    }
  | { kind: 'key'; id: string }

/** An HTML response (pages and htmx fragments). */
export const html = (body: JSX.Element, status = 200, headers: Record<string, string> = {}) =>
  Promise.resolve(body).then(
    (text) =>
      new Response(text, { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers } }),
  )

/** Navigates the browser: HX-Redirect for htmx requests, 303 for plain form posts. */
export const navigate = (request: Request, to: string) =>
  request.headers.get('hx-request') === 'true'
    ? new Response(null, { status: 200, headers: { 'hx-redirect': to } })
    : new Response(null, { status: 303, headers: { location: to } })

/** The signed-in person a page's shell shows (the guard admits no machine key on a page). */
export const shellUser = (p: ShellCaller): ShellUser =>
  p.kind === 'user'
    ? {
        name: p.account.name,
        email: p.account.email,
        csrf: p.session?.csrfToken ?? '',
        admin: p.account.isPlatformAdmin,
      }
    : { name: p.id, email: '', csrf: '' }
