// Servers set up as users set them up, through the public API (api.ts): a node with an owner signed
// up on its hosted pages and an active workspace (keys, web apps) whose identity instance is warm.
import { Api } from './api'
import type { Options } from './options'
import { freshPostgresDatabase, type Gatehouse, startGatehouse } from './process'
import type { BenchSession, BenchWorkspace } from './setup'

/** Prints what setting `what` up asked of the server's API, by status (a 5xx has thrown already). */
export const printSetup = (what: string, api: Api) =>
  console.log(`  setup of ${what} through the API: ${api.statuses}`)

/** Stops `gh` when `make` throws. */
async function orStop<T>(gh: Gatehouse, make: () => Promise<T>): Promise<T> {
  try {
    return await make()
  } catch (e) {
    await gh.stop()
    throw e
  }
}

/** A node with a dashboard session and an active workspace it owns, with `apps` web apps. */
export async function gatehouseWithOwnedWorkspace(
  opts: Options,
  apps: number,
  env: Record<string, string> = {},
) {
  const gh = await startGatehouse({ logLevel: opts.logLevel, env })
  return orStop(gh, async () => {
    const api = new Api(gh.url)
    const session = await api.signUpOwner()
    const ws = await api.createWorkspace(session, { apps })
    printSetup('the workspace', api)
    return { gh, session, ws }
  })
}

/**
 * A node with one active workspace whose instance answered its discovery once (its Provider state
 * built), `url` its issuer + `path`; `more` makes the rest a scenario needs through the same API.
 * SQLite by default, or a fresh database of this run's PostgreSQL cluster.
 */
export async function gatehouseWithWorkspace(
  opts: Options,
  path: string,
  more: {
    store?: 'sqlite' | 'postgres'
    redirectUri?: string
    env?: Record<string, string>
    setup?: (api: Api, owner: BenchSession, ws: BenchWorkspace) => Promise<void>
  } = {},
) {
  const pg = more.store === 'postgres' ? await freshPostgresDatabase() : null
  const gh = await startGatehouse({
    logLevel: opts.logLevel,
    ...(pg ? { databaseUrl: pg.url, nodeId: 'bench-node-1' } : {}),
    env: more.env,
  })
  return orStop(gh, async () => {
    const api = new Api(gh.url)
    const owner = await api.signUpOwner()
    const ws = await api.createWorkspace(owner, { redirectUri: more.redirectUri })
    await more.setup?.(api, owner, ws)
    printSetup(more.setup ? 'the workspace and the rest' : 'the workspace', api)
    const res = await fetch(`${ws.issuer}/.well-known/openid-configuration`)
    await res.body?.cancel()
    if (res.status !== 200) throw new Error(`discovery of ${ws.issuer} answered ${res.status}`)
    return { gh, ws, url: `${ws.issuer}${path}`, databasePid: pg?.postmaster }
  })
}
