import { Elysia } from 'elysia'
import htmx from '../../../node_modules/htmx.org/dist/htmx.min.js' with { type: 'file' }
// Embedded in the compiled executable (type: 'file'); served from disk in development.
import css from '../../../public/app.css' with { type: 'file' }
import script from '../../../public/app.js' with { type: 'file' }
import favicon from '../../../public/favicon.svg' with { type: 'file' }

const ASSETS: Record<string, { path: string; type: string }> = {
  'app.css': { path: css, type: 'text/css; charset=utf-8' },
  'htmx.min.js': { path: htmx, type: 'text/javascript; charset=utf-8' },
  'app.js': { path: script, type: 'text/javascript; charset=utf-8' },
  'favicon.svg': { path: favicon, type: 'image/svg+xml' },
}

/** Dashboard static assets under /public (exempt from rate limits, cached for a day). */
export const assetRoutes = () =>
  new Elysia({ name: 'assets' }).get(
    '/public/:file',
    ({ params, set }) => {
      const asset = ASSETS[params.file]
      if (!asset) {
        set.status = 404
        return { detail: 'Not Found' }
      }
      return new Response(Bun.file(asset.path), {
        headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' },
      })
    },
    { detail: { hide: true } },
  )
