import { Elysia } from 'elysia'
// Embedded in the compiled executable (type: 'file'), like htmx: /docs works on an air-gapped host
// and runs no third-party script.
import scalar from '../../../node_modules/@scalar/api-reference/dist/browser/standalone.js' with {
  type: 'file',
}
import { version as SCALAR_VERSION } from '../../../node_modules/@scalar/api-reference/package.json'
import { html } from '../../shared/views/respond'

/** Only this server: the reference needs inline styles (Scalar injects them) and data: images. */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"

// Scalar reaches out unless told not to: default fonts (fonts.scalar.com), telemetry, its agent, MCP
// generator and request proxy. The API lives on this origin, so "try it" needs no proxy.
const CONFIGURATION = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  proxyUrl: '',
  showDeveloperTools: 'never',
}

// zod (inside Scalar) probes for eval with `Function('')`, which this CSP refuses and reports as a
// violation; told to run jitless, it skips the probe. A file, not inline script, so the CSP stays.
const SETUP = 'globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true }\n'

const attr = (value: string) =>
  value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;')

// No inline script: Scalar reads its configuration from the empty #api-reference element.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API</title>
</head>
<body>
<script src="/docs/setup.js"></script>
<script id="api-reference" data-url="/openapi.json" data-configuration="${attr(JSON.stringify(CONFIGURATION))}"></script>
<script src="/docs/scalar.js?v=${SCALAR_VERSION}"></script>
</body>
</html>
`

let gzipped: Uint8Array<ArrayBuffer> | null = null

/** The API reference at /docs, rendered by the pinned Scalar bundle this executable carries. */
export const docsRoutes = () =>
  new Elysia({ name: 'docs' })
    .get(
      '/docs',
      () => html(PAGE, 200, { 'content-security-policy': DOCS_CSP, 'x-content-type-options': 'nosniff' }),
      { detail: { hide: true } },
    )
    .get(
      '/docs/setup.js',
      () =>
        new Response(SETUP, {
          headers: { 'content-type': 'text/javascript; charset=utf-8', 'x-content-type-options': 'nosniff' },
        }),
      { detail: { hide: true } },
    )
    .get(
      '/docs/scalar.js',
      async ({ request }) => {
        const headers: Record<string, string> = {
          'content-type': 'text/javascript; charset=utf-8',
          // The page asks for ?v=<version>: a new bundle is a new URL.
          'cache-control': 'public, max-age=31536000, immutable',
          'x-content-type-options': 'nosniff',
          vary: 'accept-encoding',
        }
        // 4.3 MB as is, about a quarter gzipped: compressed once, on first use.
        if (!/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')) {
          return new Response(Bun.file(scalar), { headers })
        }
        gzipped ??= Bun.gzipSync(await Bun.file(scalar).bytes())
        return new Response(gzipped, { headers: { ...headers, 'content-encoding': 'gzip' } })
      },
      { detail: { hide: true } },
    )
