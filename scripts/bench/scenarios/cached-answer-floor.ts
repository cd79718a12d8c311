// `cached-answer-floor`: what each part of a cached discovery or JWKS answer costs a Bun.serve
// handler (servers/cached-answer.ts), each variant against `bare` through the A/B comparator:
//   bare     the bytes with three representation headers, from a headers object
//   headers  the bytes with every header Gatehouse sends (security headers, a request id)
//   clone    the same answer cloned from one cached Response (how the bridge answers)
//   hdr      clone + reading one request header (an incoming X-Request-Id)
//   id       clone + a fresh request id set on the copy
//   log      id + the access-log record of src/shared/logger.ts (stdout into a file)
//   front    log + request.url and a route remembered per URL (what the front door does)
//   loaded   front, in a process that also runs a whole Gatehouse node (SQLite)
//   paced    loaded, with the front door's eden collection every 2,000 requests
// It shows where the discovery/JWKS target of 0.80 of `bare` stands; read the CPU cost ratios too.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compare } from '../compare'
import { expect200 } from '../load'
import type { Options } from '../options'
import { startServerScript } from '../process'
import { httpSide, REWARM_S, type Scenario, type Started, stopAll } from '../scenario'

export const VARIANTS = ['bare', 'headers', 'clone', 'hdr', 'id', 'log', 'front', 'loaded', 'paced'] as const

async function variantSide(variant: string, opts: Options): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-floor-'))
  const s = await startServerScript(
    'cached-answer.ts',
    { CACHED_ANSWER_VARIANT: variant, CACHED_ANSWER_DIR: dir },
    join(dir, 'stdout.log'),
  )
  const url = `${s.url}/i/x/.well-known/openid-configuration`
  const stop = async () => {
    await s.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  return httpSide(variant, { pid: s.pid, stop }, () => new Request(url), expect200, opts)
}

export default {
  description:
    'a cached answer built up one part at a time in a bare Bun.serve handler, each variant against `bare`',
  defaults: { seconds: 4 },
  async run({ opts, report }) {
    const bare = await variantSide('bare', opts)
    try {
      for (const variant of VARIANTS.slice(1)) {
        const side = await variantSide(variant, opts)
        try {
          report.comparison(variant, await compare(bare, side, { ...opts, rewarm: REWARM_S }))
        } finally {
          await stopAll([side])
        }
      }
    } finally {
      await stopAll([bare])
    }
  },
} satisfies Scenario
