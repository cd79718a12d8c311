import type { PropsWithChildren } from '@kitajs/html'
import { cspHash } from '../security-headers'
import { currentBrand, type HostedBrand } from './brand'
import { Alert } from './components'

// A word wider than a phone's card (an email address, a firm's compound name beside its logo) breaks
// inside the card instead of scrolling the page sideways: `overflow-wrap`, and the brand's name may
// shrink (`min-width:0`) and go under the logo (`flex-wrap`).
const STYLE = `
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--brand-text,#1f2330);background:var(--brand-background,#f3f4f8);display:flex;min-height:100vh;align-items:center;justify-content:center;overflow-wrap:break-word}
main{width:100%;max-width:380px;margin:24px;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(16,24,40,.1),0 1px 2px rgba(16,24,40,.06);padding:32px}
h1{font-size:22px;margin:0 0 4px}p.sub{color:#5b6170;margin:0 0 20px}
label{display:block;font-weight:600;font-size:14px;margin:14px 0 6px}
input[type=email],input[type=password],input[type=text]{width:100%;padding:10px 12px;border:1px solid #cfd3dc;border-radius:8px;font:inherit}
input:focus{outline:2px solid var(--brand-primary,#4f46e5);outline-offset:1px;border-color:var(--brand-primary,#4f46e5)}
button{width:100%;margin-top:20px;padding:11px;border:0;border-radius:8px;background:var(--brand-primary,#4f46e5);color:#fff;font:600 15px system-ui,sans-serif;cursor:pointer}
button:hover{filter:brightness(.9)}button.link{background:none;color:var(--brand-primary,#4f46e5);margin-top:8px;padding:4px}
.alert{padding:10px 12px;border-radius:8px;margin:0 0 12px;font-size:14px}.alert.error{background:#fdecec;color:#9b1c1c}.alert.ok{background:#e9f7ef;color:#17603a}
.links{margin-top:18px;font-size:14px;display:flex;justify-content:space-between;gap:8px}a{color:var(--brand-primary,#4f46e5)}
code.user-code{display:block;text-align:center;font-size:26px;letter-spacing:4px;margin:12px 0}
.hint{color:#5b6170;font-size:13px;margin-top:4px}
.idps{display:flex;flex-direction:column;gap:8px;margin:0 0 16px}.idps a{display:block;text-align:center;padding:10px;border:1px solid #cfd3dc;border-radius:8px;color:#1f2330;text-decoration:none;font-weight:600}.idps a:hover{background:#f3f4f8}
.or{text-align:center;color:#5b6170;font-size:13px;margin:4px 0 0}
.brand{display:flex;flex-wrap:wrap;align-items:center;gap:10px;margin:0 0 18px}.brand img{display:block;max-height:40px;max-width:160px}.brand p{margin:0;font-weight:600;font-size:16px;min-width:0}
.legal{margin:20px 0 0;font-size:12px;display:flex;gap:14px;justify-content:center}
`

/**
 * The platform's icon, served by the control plane (`/public`, not rate limited). Root-relative: on a
 * path-based issuer it is the control plane's own origin; a host-based instance serves the same file
 * at that path (identity/pages/assets.ts).
 */
export const FAVICON_PATH = '/public/favicon.svg'

/** Lets the inline `<style>` below through a Content-Security-Policy without 'unsafe-inline'. */
export const LAYOUT_STYLE_HASH = cspHash(STYLE)

// The policy allows no inline style but the layout's own: htmx must not add its indicator style.
const HTMX_CONFIG = JSON.stringify({ includeIndicatorStyles: false })

interface LayoutProps {
  title: string
  /** Where the page loads htmx from: only a page that asks the server again by itself (a poll) runs script. */
  htmx?: string
}

/** The workspace's logo and name above the page's own heading. */
function BrandHeader({ brand }: { brand: HostedBrand }) {
  if (!brand.logoUrl && !brand.displayName) return ''
  return (
    <header class="brand">
      {/* Beside the name the logo says nothing more; alone, it is the workspace's logo. */}
      {brand.logoUrl ? <img src={brand.logoUrl} alt={brand.displayName ? '' : 'Logo'} /> : ''}
      {brand.displayName ? <p safe>{brand.displayName}</p> : ''}
    </header>
  )
}

/** The workspace's privacy policy and terms, under the page. */
function LegalLinks({ brand }: { brand: HostedBrand }) {
  if (!brand.privacyPolicyUrl && !brand.termsUrl) return ''
  return (
    <footer class="legal">
      {brand.privacyPolicyUrl ? (
        <a href={brand.privacyPolicyUrl} rel="noopener noreferrer" target="_blank">
          Privacy policy
        </a>
      ) : (
        ''
      )}
      {brand.termsUrl ? (
        <a href={brand.termsUrl} rel="noopener noreferrer" target="_blank">
          Terms
        </a>
      ) : (
        ''
      )}
    </footer>
  )
}

/**
 * The shell of every hosted page of an identity instance (self-contained: no external assets), and
 * of the control plane's pages a signed-out browser sees (they look like the sign-in they follow).
 * An instance's pages carry its workspace's brand (`currentBrand`): name, logo, colours (custom
 * properties in a second style element, which the instance's policy allows by its hash) and legal
 * links. The control plane's pages never have one: they are the platform's.
 */
export function Layout({ title, htmx, children }: PropsWithChildren<LayoutProps>) {
  const brand = currentBrand()
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex" />
          <title safe>{brand?.displayName ? `${title} · ${brand.displayName}` : title}</title>
          <link rel="icon" type="image/svg+xml" href={FAVICON_PATH} />
          <style>{STYLE}</style>
          {brand?.style ? <style safe>{brand.style}</style> : ''}
          {htmx ? (
            <>
              <meta name="htmx-config" content={HTMX_CONFIG} />
              <script src={htmx} defer></script>
            </>
          ) : (
            ''
          )}
        </head>
        <body>
          <main>
            {brand ? <BrandHeader brand={brand} /> : ''}
            {children}
            {brand ? <LegalLinks brand={brand} /> : ''}
          </main>
        </body>
      </html>
    </>
  )
}

/** Where a browser goes on from a hosted page that ends a flow. */
export interface PageLink {
  href: string
  label: string
}

/**
 * The end of a hosted flow, well (verified, changed, connected) or not (why it went wrong), and where
 * to go on: every hosted error page is one.
 */
export function MessagePage(p: { title: string; message: string; kind?: 'error' | 'ok'; link?: PageLink }) {
  return (
    <Layout title={p.title}>
      <h1 safe>{p.title}</h1>
      <Alert kind={p.kind ?? 'error'} message={p.message} />
      {p.link ? (
        <p>
          <a href={p.link.href} safe>
            {p.link.label}
          </a>
        </p>
      ) : (
        ''
      )}
    </Layout>
  ) as string
}
