import { Elysia } from 'elysia'
import htmx from '../../../node_modules/htmx.org/dist/htmx.min.js' with { type: 'file' }
import favicon from '../../../public/favicon.svg' with { type: 'file' }
import { hostedPage } from '../engine/hosted'

/** Where an instance serves htmx, below its prefix. */
export const HTMX_PATH = '/assets/htmx.min.js'

/**
 * htmx for the hosted pages that ask the server again by themselves (the verify page's poll), from
 * the instance itself: the pages stay self-contained on a host-based issuer too, and the plane's
 * policy allows scripts of its own origin only. Embedded in the executable, as the dashboard's copy.
 */
export const htmxAsset = () =>
  new Elysia({ name: 'htmx-asset' }).use(hostedPage('hosted-page')).get(
    HTMX_PATH,
    () =>
      new Response(Bun.file(htmx), {
        headers: {
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'public, max-age=86400',
        },
      }),
  )

/**
 * The platform's icon at the path the hosted layout links (FAVICON_PATH), for a host-based issuer,
 * whose pages ask their own host for it; on a path-based one the control plane answers that path.
 * Answered before any instance is looked up or counted: a static asset, exempt like the dashboard's.
 */
export const faviconResponse = () =>
  new Response(Bun.file(favicon), {
    headers: { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' },
  })
