// `alternate <A> <B> [--path P] [--rounds N] [--seconds S]`: two source trees of Gatehouse side by
// side through the A/B comparator (e.g. `git worktree add /tmp/before HEAD~1` against `.`), or a tree
// against `bare` (servers/bytes.ts answering the bytes and the library's headers A's instance
// answered; with --path /token, servers/oidc.ts: a bare oidc-provider with the client of A's
// workspace) or `dressed` (the same bytes with every header A answered, so that `. dressed` leaves
// out what the headers themselves cost). --path is below the workspace's issuer:
// /.well-known/openid-configuration (default), /jwks or /token. Ratio = B / A.
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Api } from '../api'
import { compare } from '../compare'
import { expect200, expectAccessToken } from '../load'
import type { Options } from '../options'
import { startGatehouse, startServerScript } from '../process'
import { httpSide, REWARM_S, type Scenario, type Started, stopAll } from '../scenario'
import { libraryHeaders } from '../setup'
import { tokenRequest } from './client-credentials'
import { startBytes } from './discovery'

const BARE_SIDES = ['bare', 'dressed']
/** Headers Bun sets itself: a `dressed` side answers every other header A answered. */
const SET_BY_BUN = ['date', 'content-length']

/** A Gatehouse of `tree` with one workspace made through its API; `url` is what its side is asked. */
async function treeSide(tree: string, opts: Options) {
  const gh = await startGatehouse({ logLevel: opts.logLevel, tree: resolve(tree) })
  try {
    const api = new Api(gh.url)
    const ws = await api.createWorkspace(await api.signUpOwner())
    const url = `${ws.issuer}${opts.path}`
    const side =
      opts.path === '/token'
        ? httpSide(
            tree,
            gh,
            tokenRequest(url, ws.clientId, ws.clientSecret),
            expectAccessToken('ES256'),
            opts,
          )
        : httpSide(tree, gh, () => new Request(url), expect200, opts)
    return { side, url, ws }
  } catch (e) {
    await gh.stop()
    throw e
  }
}

async function bareSide(
  kind: string,
  a: Awaited<ReturnType<typeof treeSide>>,
  opts: Options,
): Promise<Started> {
  if (opts.path === '/token') {
    const s = await startServerScript('oidc.ts', {
      BENCH_CLIENT_ID: a.ws.clientId,
      BENCH_CLIENT_SECRET: a.ws.clientSecret,
    })
    return httpSide(
      kind,
      s,
      tokenRequest(`${s.url}/token`, a.ws.clientId, a.ws.clientSecret),
      expectAccessToken('ES256'),
      opts,
    )
  }
  const res = await fetch(a.url)
  const headers =
    kind === 'dressed'
      ? [...res.headers].filter(([k]) => !SET_BY_BUN.includes(k))
      : libraryHeaders(res.headers)
  const body = Buffer.from(await res.arrayBuffer()).toString('base64')
  return startBytes(
    kind,
    { body, headers: Object.fromEntries(headers), pathname: new URL(a.url).pathname },
    opts,
  )
}

export default {
  description: 'two source trees of Gatehouse (or one and a bare baseline) in alternating windows: B / A',
  defaults: { rounds: 12 },
  async run({ opts, report }) {
    const [treeA, treeB] = opts.positional
    if (!treeA || !treeB || BARE_SIDES.includes(treeA) || (treeB === 'dressed' && opts.path === '/token'))
      throw new Error('usage: alternate <tree> <tree|bare|dressed> [--path P] [--rounds N] [--seconds S]')
    for (const tree of [treeA, treeB])
      if (!BARE_SIDES.includes(tree) && !existsSync(join(tree, 'src/main.ts')))
        throw new Error(`${tree}: no src/main.ts (a Gatehouse source tree, bare or dressed)`)
    const a = await treeSide(treeA, opts)
    const sides: Started[] = [a.side]
    try {
      sides.push(
        BARE_SIDES.includes(treeB) ? await bareSide(treeB, a, opts) : (await treeSide(treeB, opts)).side,
      )
      report.comparison('B / A', await compare(sides[0]!, sides[1]!, { ...opts, rewarm: REWARM_S }))
    } finally {
      await stopAll(sides)
    }
  },
} satisfies Scenario
