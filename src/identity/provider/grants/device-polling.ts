import type { KoaContextWithOIDC } from 'oidc-provider'
import type { Core } from '../../../core'
import type { AfterRoute } from '../after-route'
import { current } from '../instance-scope'
import { DEVICE_POLL_INTERVAL_S } from '../ttl'

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

// $1 instance, $2 device code key, $3 now, $4 now - the interval (the last poll must be no later).
const MARK = `
  UPDATE oidc_payloads SET polled_at = $3
  WHERE instance_id = $1 AND model = 'DeviceCode' AND id = $2
    AND (polled_at IS NULL OR polled_at <= $4)
  RETURNING 1 AS paced`

/**
 * RFC 8628 §3.5 pacing, which oidc-provider 9 does not do (it defines `slow_down` but never
 * answers it). Runs after oidc-provider's own handling: the device authorization response names
 * the interval, and a token request answered `authorization_pending` sooner than the interval after
 * the last one answered so becomes `slow_down`. The last poll is a column of the device code's
 * row, set on the core clock, so every node shares it.
 */
export function devicePolling(core: Core): AfterRoute {
  return (ctx) => {
    const route = ctx.oidc?.route
    const body = ctx.body as Record<string, unknown> | undefined
    if (route === 'device_authorization' && ctx.status === 200 && body) {
      body.interval = DEVICE_POLL_INTERVAL_S
      return
    }
    if (route !== 'token' || ctx.oidc.params?.grant_type !== DEVICE_GRANT) return
    if (body?.error !== 'authorization_pending') return
    return pace(core, ctx)
  }
}

async function pace(core: Core, ctx: KoaContextWithOIDC): Promise<void> {
  const now = core.clock.now()
  const { id, codec } = current()
  const paced = await core.store.query(MARK, [
    id,
    codec.key(String(ctx.oidc.params?.device_code)),
    now,
    now - DEVICE_POLL_INTERVAL_S * 1000,
  ])
  if (paced.length === 0) {
    ctx.body = {
      error: 'slow_down',
      error_description: `poll at most every ${DEVICE_POLL_INTERVAL_S} seconds`,
    }
  }
}
