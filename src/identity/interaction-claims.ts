import type { Core } from '../core'
import type { ServedInstance } from './provider/instance-scope'

// A sign-in waiting on a mailed link can go on in two tabs: the one that started it (it polls) and
// the link's ("Continue here instead"). One row in `oidc_payloads` per interaction, next to the
// interaction's own and under the same keyed id, says that one of them went on: written once (the
// insert that finds it there fails), it outlives the interaction (oidc-provider deletes that at
// its resume) until the interaction would have expired, when the purge takes it.

const MODEL = 'InteractionClaim'
const CLAIM = `
  INSERT INTO oidc_payloads (instance_id, model, id, payload, expires_at)
  VALUES ($1, '${MODEL}', $2, '{}', $3)
  ON CONFLICT (instance_id, model, id) DO NOTHING`
const CLAIMED = `SELECT 1 AS one FROM oidc_payloads WHERE instance_id = $1 AND model = '${MODEL}' AND id = $2 AND expires_at > $3`

type Served = Pick<ServedInstance, 'id' | 'codec'>

/** Whether this request is the one that goes on with interaction `uid` (`exp`: its expiry, epoch seconds). */
export async function claimInteraction(core: Core, instance: Served, uid: string, exp: number) {
  const written = await core.store.exec(CLAIM, [instance.id, instance.codec.key(uid), exp * 1000])
  return written > 0
}

/** Whether a tab already went on with interaction `uid` (it may since have ended). */
export async function interactionClaimed(core: Core, instance: Served, uid: string) {
  const rows = await core.store.query(CLAIMED, [instance.id, instance.codec.key(uid), core.clock.now()])
  return rows.length > 0
}
