// `sign-in`: whole hosted password sign-ins (../sign-in.ts: GET /auth → the sign-in page → the form
// post → the resume → the redirect with a code), one account per connection, all signed up on the
// workspace's hosted pages, vs the bound of argon2id itself: verifies of a hash made by the
// product's own sign-up of the same password, as many at once as CPUs, in a child process
// (servers/hash-bound.ts). The ratio is the share of the sign-in path's time spent hashing.
// `sign-in-metering`: the same sign-ins with billing's MAU metering on vs off.
import { ATTEMPT_BUCKETS } from '../../../src/limits/buckets'
import { gatehouseWithWorkspace } from '../fixtures'
import { type LoadResult, runClosedLoop } from '../load'
import { CPUS, type Options } from '../options'
import { startServerScript } from '../process'
import { type SideSpec, throughput } from '../scenario'
import { productPasswordHash } from '../setup'
import { type SignInTarget, signInOnce } from '../sign-in'

const PASSWORD = 'correct horse battery staple'
/** The app redirects here; nothing serves it (the redirect is read, not followed). */
const REDIRECT_URI = 'https://rp.example/cb'

/**
 * Billing configured, so MAU metering runs on every sign-in. The sign-in path never calls Stripe
 * (no meter event name: no usage report job), so the API host is an address nothing answers.
 */
const METERING_ON = {
  STRIPE_SECRET_KEY: 'sk_test_bench',
  STRIPE_WEBHOOK_SECRET: 'whsec_bench',
  STRIPE_PRICE_FREE: 'price_bench_free',
  STRIPE_PRICE_PRO: 'price_bench_pro',
  STRIPE_API_HOST: 'http://127.0.0.1:9',
  BILLING_FREE_INCLUDED_MAU: '100000000',
}

function signIns(name: string, env: Record<string, string> = {}): SideSpec {
  return {
    name,
    async start(opts: Options) {
      // Every attempt in flight holds a slot of the per-address throttle (all come from 127.0.0.1).
      if (opts.connections >= ATTEMPT_BUCKETS.signInAddress.limit)
        throw new Error(
          `sign-in: at most ${ATTEMPT_BUCKETS.signInAddress.limit - 1} connections (the sign-in throttle's per-address limit)`,
        )
      const emails = Array.from({ length: opts.connections }, (_, i) => `user-${i}@bench.example`)
      const { gh, ws } = await gatehouseWithWorkspace(opts, '', {
        redirectUri: REDIRECT_URI,
        env,
        async setup(api, owner, ws) {
          await api.setLoginPolicy(owner, ws.workspaceId, { require_email_verification: false })
          // One at a time: a sign-up is mostly a hash, and each in flight takes a throttle slot.
          for (const [i, email] of emails.entries())
            await api.signUpEndUser(ws, REDIRECT_URI, { email, password: PASSWORD, name: `Bench user ${i}` })
        },
      })
      const target: SignInTarget = {
        origin: gh.url,
        issuer: ws.issuer,
        clientId: ws.clientId,
        redirectUri: REDIRECT_URI,
      }
      return {
        name,
        unit: 'sign-ins/s',
        pids: [gh.pid],
        // Connection i signs in as account i: never two attempts of one account at once.
        load: (seconds) =>
          runClosedLoop(async (i) => (await signInOnce(target, emails[i]!, PASSWORD)).problem, {
            seconds,
            connections: opts.connections,
          }),
        stop: gh.stop,
      }
    },
  }
}

const hashBound: SideSpec = {
  name: 'argon2id verify bound',
  async start() {
    const s = await startServerScript('hash-bound.ts', {
      BENCH_PASSWORD: PASSWORD,
      BENCH_HASH: await productPasswordHash(PASSWORD),
    })
    return {
      name: this.name,
      unit: 'verifies/s',
      pids: [s.pid],
      async load(seconds) {
        const res = await fetch(`${s.url}/run?seconds=${seconds}&concurrency=${CPUS}`, { method: 'POST' })
        if (!res.ok) throw new Error(`hash-bound.ts answered HTTP ${res.status}: ${await res.text()}`)
        const out = (await res.json()) as Omit<LoadResult, 'errorKinds'> & { errorKinds: [string, number][] }
        return { ...out, errorKinds: new Map(out.errorKinds) }
      },
      stop: s.stop,
    }
  },
}

/** A sign-in takes a large part of a second (more samples), and is mostly a hash (a few per CPU). */
const defaults = { seconds: 10, connections: CPUS * 2 }

export const signIn = throughput({
  description:
    "hosted password sign-ins of a workspace instance, each a whole flow with its own cookie jar, ending at the app's redirect URI with a code, vs argon2id verifies of the same kind of hash (the product's parameters) in a child process",
  method: `sign-ins/s counts flows that ended with a code; --connections flows at once, one account each; verifies/s runs ${CPUS} verifies at once (CPUs). Ratio = the share of the sign-in path's time spent in the hash`,
  defaults,
  minRatio: 0.8,
  baseline: hashBound,
  subject: signIns('gatehouse: sign-in'),
})

export const signInMetering = throughput({
  description:
    "the sign-in scenario's flows with billing's MAU metering on (each finished sign-in upserts the user's row of the month) vs the same server without billing",
  defaults,
  minRatio: 0.95,
  baseline: signIns('gatehouse: sign-in, metering off'),
  subject: signIns('gatehouse: sign-in, metering on', METERING_ON),
})
