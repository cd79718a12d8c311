// Several real `gatehouse serve` processes on one PostgreSQL database behind one BASE_URL: a small
// round-robin HTTP proxy in the test process sends each request to the next node in turn, so every
// request of a flow lands on another node (tests/cluster.test.ts).

import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { TEST_RATE_LIMITS } from './limits'
import { freePort } from './server'
import { tempDir } from './temp'

const NODE_ENTRY = join(import.meta.dir, '../fixtures/cluster-node.ts')

/** Hop-by-hop headers (RFC 9110 §7.6.1): never forwarded by a proxy. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
])

export interface RoundRobinProxy {
  /** The proxy's origin: the cluster's BASE_URL. */
  url: string
  /** Which target served each request, in order (the index into `targets`). */
  served: number[]
  stop(): Promise<void>
}

/**
 * A load balancer without stickiness: request n goes to `targets[n % targets.length]`, with its
 * method, headers (Host kept as the proxy's, so it matches BASE_URL), body and query; the answer
 * (status, redirects, Set-Cookie, body) comes back as is. A target that does not answer is a 502.
 */
export function roundRobinProxy(targets: string[]): RoundRobinProxy {
  let next = 0
  const served: number[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const index = next++ % targets.length
      served.push(index)
      const incoming = new URL(req.url)
      const headers = new Headers()
      for (const [name, value] of req.headers) {
        // Compression stays end to end: fetch would unzip a body whose content-encoding header it keeps.
        if (!HOP_BY_HOP.has(name) && name !== 'accept-encoding') headers.append(name, value)
      }
      headers.set('host', incoming.host)
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
      let res: Response
      try {
        res = await fetch(`${targets[index]}${incoming.pathname}${incoming.search}`, {
          method: req.method,
          headers,
          body: hasBody ? await req.arrayBuffer() : undefined,
          redirect: 'manual',
        })
      } catch (e) {
        return new Response(`proxy: node ${index + 1} did not answer: ${(e as Error).message}`, {
          status: 502,
        })
      }
      const out = new Headers()
      for (const [name, value] of res.headers) {
        if (HOP_BY_HOP.has(name) || name === 'set-cookie' || name === 'content-length') continue
        out.append(name, value)
      }
      for (const cookie of res.headers.getSetCookie()) out.append('set-cookie', cookie)
      const body =
        req.method === 'HEAD' || res.status === 204 || res.status === 304 ? null : await res.arrayBuffer()
      return new Response(body, { status: res.status, statusText: res.statusText, headers: out })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    served,
    async stop() {
      await server.stop(true)
    },
  }
}

export interface ClusterNode {
  /** 1-based, as the test names them. */
  index: number
  nodeId: string
  /** Where the node listens (its own origin; requests sent here carry the cluster's Host). */
  url: string
  dataDir: string
  /** The fixture's loopback control port (enqueues through this node's core). */
  controlUrl: string
  proc: Subprocess
  /**
   * A request to this node alone, addressed as the cluster's BASE_URL (Host header): `path` or a
   * URL on BASE_URL, which is rewritten to this node.
   */
  fetch(pathOrUrl: string | URL, init?: RequestInit): Promise<Response>
  /** Enqueues `count` jobs through this node's own core (its control port), one by one; returns their ids. */
  enqueue(kind: string, payload: unknown, count?: number): Promise<string[]>
  /** Enqueues these jobs in one transaction on this node (its workers wake once, all of them due). */
  enqueueBatch(jobs: { kind: string; payload: unknown }[]): Promise<string[]>
  /** DATA_DIR/jobs.log of the `test.journal` job kind (tests/fixtures/test-jobs.ts). */
  journal(): string
  /** kill -9, then waits for the process to be gone. */
  kill(): Promise<void>
  /** Starts the node again with the same NODE_ID, DATA_DIR and ports; resolves once it serves. */
  restart(): Promise<void>
}

export interface Cluster {
  baseUrl: string
  databaseUrl: string
  nodes: ClusterNode[]
  proxy: RoundRobinProxy
  stop(): Promise<void>
}

/** Polls `check` until it returns true, or throws after `ms`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000, every = 25) {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      if (await check()) return
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await Bun.sleep(every)
  }
}

/**
 * Starts `count` nodes (tests/fixtures/cluster-node.ts: `serve` with the test job kinds) on
 * `databaseUrl`, each with its own NODE_ID, DATA_DIR and port, and one SECRET_KEY, behind one
 * round-robin proxy that is their BASE_URL. `env` is added to every node's environment.
 */
export async function startCluster(
  databaseUrl: string,
  count: number,
  env: Record<string, string> = {},
): Promise<Cluster> {
  const secretKey = randomBytes(32).toString('hex')
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()))
  const controlPorts = await Promise.all(Array.from({ length: count }, () => freePort()))
  const proxy = roundRobinProxy(ports.map((p) => `http://127.0.0.1:${p}`))
  const baseUrl = proxy.url
  const host = new URL(baseUrl).host

  const nodes = ports.map((port, i): ClusterNode => {
    const dataDir = tempDir('gatehouse-cluster-')
    const nodeId = `cluster-node-${i + 1}`
    const url = `http://127.0.0.1:${port}`
    const controlUrl = `http://127.0.0.1:${controlPorts[i]}`
    // An explicit environment: nothing of the test process (its DATABASE_URL least of all) leaks in.
    const nodeEnv: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: databaseUrl,
      SECRET_KEY: secretKey,
      NODE_ID: nodeId,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: baseUrl,
      LOG_LEVEL: 'warn',
      TEST_CONTROL_PORT: String(controlPorts[i]),
      ...TEST_RATE_LIMITS,
      ...env,
    }
    const spawn = () =>
      Bun.spawn([process.execPath, NODE_ENTRY], {
        env: nodeEnv,
        stdout: Bun.file(join(dataDir, `node-${Date.now()}.log`)),
        stderr: 'inherit',
      })
    const control = async (body: unknown) => {
      const res = await fetch(`${controlUrl}/enqueue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      if (res.status !== 200) throw new Error(`enqueue on node ${i + 1}: ${res.status} ${await res.text()}`)
      return ((await res.json()) as { ids: string[] }).ids
    }
    const node: ClusterNode = {
      index: i + 1,
      nodeId,
      url,
      dataDir,
      controlUrl,
      proc: spawn(),
      fetch(pathOrUrl, init = {}) {
        const target = new URL(String(pathOrUrl), baseUrl)
        const headers = new Headers(init.headers)
        headers.set('host', host)
        return fetch(`${url}${target.pathname}${target.search}`, { redirect: 'manual', ...init, headers })
      },
      enqueue: (kind, payload, n = 1) => control({ kind, payload, count: n }),
      enqueueBatch: (jobs) => control({ jobs }),
      journal() {
        const file = join(dataDir, 'jobs.log')
        return existsSync(file) ? readFileSync(file, 'utf8') : ''
      },
      async kill() {
        node.proc.kill('SIGKILL')
        await node.proc.exited
      },
      async restart() {
        node.proc = spawn()
        await serving(node)
      },
    }
    return node
  })

  const cluster: Cluster = {
    baseUrl,
    databaseUrl,
    nodes,
    proxy,
    async stop() {
      for (const n of nodes) n.proc.kill('SIGTERM')
      await Promise.all(
        nodes.map((n) => Promise.race([n.proc.exited, Bun.sleep(3000).then(() => n.proc.kill('SIGKILL'))])),
      )
      await proxy.stop()
    },
  }
  try {
    await Promise.all(nodes.map(serving))
  } catch (e) {
    await cluster.stop()
    throw e
  }
  return cluster
}

/** Resolves once the node's /healthz says ok on PostgreSQL and its control port (up after start-up) answers. */
async function serving(node: ClusterNode): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    if (node.proc.exitCode !== null) throw new Error(`node ${node.index} exited with ${node.proc.exitCode}`)
    try {
      const res = await node.fetch('/healthz')
      const body = (await res.json()) as { store?: string; database?: string }
      const control = await fetch(`${node.controlUrl}/ready`)
      if (res.status === 200 && body.store === 'postgres' && body.database === 'ok' && control.status === 200)
        return
    } catch {}
    if (Date.now() > deadline) throw new Error(`node ${node.index} did not serve within 30 s`)
    await Bun.sleep(50)
  }
}
