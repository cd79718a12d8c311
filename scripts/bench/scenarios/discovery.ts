// `discovery`, `jwks`: a workspace instance's cached documents through the full server (request id,
// security headers, access log) vs a bare Bun.serve handler asked the same path and answering the
// same bytes with the headers oidc-provider answers with them (servers/bytes.ts, LIBRARY_HEADERS),
// fetched once per run from an instance set up as the subject's is.
import { gatehouseWithWorkspace } from '../fixtures'
import { expect200 } from '../load'
import type { Options } from '../options'
import { startServerScript } from '../process'
import { httpSide, type SideSpec, throughput } from '../scenario'
import { libraryHeaders } from '../setup'

interface Answer {
  body: string
  headers: Record<string, string>
  pathname: string
}

/** What a warm instance of a fresh node answers at `path` (the node stopped again). */
async function answerOf(opts: Options, path: string): Promise<Answer> {
  const { gh, url } = await gatehouseWithWorkspace(opts, path)
  try {
    const res = await fetch(url)
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`)
    const headers = Object.fromEntries(libraryHeaders(res.headers))
    const body = Buffer.from(await res.arrayBuffer()).toString('base64')
    return { body, headers, pathname: new URL(url).pathname }
  } finally {
    await gh.stop()
  }
}

/** The bare handler answering `answer` (bytes.ts), asked the same path. */
export async function startBytes(name: string, answer: Answer, opts: Options) {
  const s = await startServerScript('bytes.ts', {
    BENCH_BODY: answer.body,
    BENCH_HEADERS: JSON.stringify(answer.headers),
  })
  return httpSide(name, s, () => new Request(`${s.url}${answer.pathname}`), expect200, opts)
}

function cachedDocument(path: string, what: string, minRate?: number) {
  const bare: SideSpec = {
    name: `bare Bun.serve, same bytes (${what})`,
    async start(opts) {
      return startBytes(this.name, await answerOf(opts, path), opts)
    },
  }
  return throughput({
    description: `GET {issuer}${path} of a workspace instance through the full server (answered from the bridge cache after the first request) vs a bare Bun.serve handler, asked the same path, answering the same bytes with oidc-provider's headers for them`,
    minRatio: 0.8,
    minRate,
    baseline: bare,
    subject: {
      name: `gatehouse: ${what}`,
      async start(opts) {
        const { gh, url } = await gatehouseWithWorkspace(opts, path)
        return httpSide(this.name, gh, () => new Request(url), expect200, opts)
      },
    },
  })
}

export const discovery = cachedDocument('/.well-known/openid-configuration', 'discovery', 10_000)
export const jwks = cachedDocument('/jwks', 'jwks')
