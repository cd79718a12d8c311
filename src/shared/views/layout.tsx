import type { PropsWithChildren } from '@kitajs/html'

export interface ShellUser {
  name: string
  email: string
  csrf: string
  /** The platform administrator (the install's first account): the top bar says so. */
  admin?: boolean
}

/** Who administers this install, on the administrator's own top bar and home page. */
export const ADMINISTERS = 'This account administers this Gatehouse install'

// htmx 2 does not swap 4xx/5xx by default: swap 422 (forms re-rendered with their errors) and
// other errors into the target too, so problems show in the page, never as a silent no-op.
const HTMX_CONFIG = JSON.stringify({
  responseHandling: [
    { code: '204', swap: false },
    { code: '[23]..', swap: true },
    { code: '[45]..', swap: true, error: true },
  ],
  defaultSwapStyle: 'innerHTML',
  // The CSP allows no inline style element; the indicator classes are not used.
  includeIndicatorStyles: false,
  // Settling copies these attributes from an element to its redrawn self with setAttribute; a
  // `style` attribute (one the CSSOM set, e.g. the branding preview's colours) is inline style the
  // CSP refuses, so it is left out. Scripts set styles again after a swap where they need them.
  attributesToSettle: ['class', 'width', 'height'],
})

interface ShellProps {
  title: string
  user?: ShellUser | null
  /** Which nav entry is current. */
  section?: 'home' | 'workspaces'
}

/** The dashboard page shell: top bar with navigation and the signed-in user. */
export function Shell({ title, user, section, children }: PropsWithChildren<ShellProps>) {
  const headers = user ? JSON.stringify({ 'X-CSRF-Token': user.csrf }) : undefined
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="htmx-config" content={HTMX_CONFIG} />
          <title safe>{`${title} · Gatehouse`}</title>
          <link rel="icon" type="image/svg+xml" href="/public/favicon.svg" />
          <link rel="stylesheet" href="/public/app.css" />
          <script src="/public/htmx.min.js" defer></script>
          <script src="/public/app.js" defer></script>
        </head>
        <body hx-headers={headers}>
          <header class="topbar">
            <a class="brand" href="/app/">
              Gatehouse
            </a>
            {user ? (
              <>
                <nav aria-label="Main">
                  <a href="/app/" aria-current={section === 'home' ? 'page' : undefined}>
                    Home
                  </a>
                  <a href="/app/workspaces" aria-current={section === 'workspaces' ? 'page' : undefined}>
                    Workspaces
                  </a>
                </nav>
                <div class="user">
                  <span safe>{user.name || user.email}</span>
                  {user.admin ? (
                    <span class="badge admin" title={ADMINISTERS}>
                      Administrator
                    </span>
                  ) : (
                    ''
                  )}
                  <form method="post" action="/v1/auth/logout">
                    <input type="hidden" name="_csrf" value={user.csrf} />
                    <button class="btn secondary small" type="submit">
                      Sign out
                    </button>
                  </form>
                </div>
              </>
            ) : (
              ''
            )}
          </header>
          <main>{children}</main>
        </body>
      </html>
    </>
  )
}
