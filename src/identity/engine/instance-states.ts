import type { Core } from '../../core'
import { inStrings, type ListSize, listParam, listSize } from '../../db/in-strings'
import type { Dialect } from '../../db/store'
import type { WorkspaceState } from '../deps'

/** A row's state as the identity plane reads it: SQLite stores the flag as 0/1, PostgreSQL as a boolean. */
export const servingState = (
  serving: boolean | number | null,
  rps: number | string | null,
): WorkspaceState => ({
  active: serving === true || serving === 1,
  dataPlaneRps: rps == null ? null : Number(rps),
})

const STATES_OF = (dialect: Dialect, size: ListSize) => `
  SELECT instance_id AS "instanceId", serving, data_plane_rps AS "dataPlaneRps"
  FROM instance_secrets WHERE ${inStrings(dialect, 'instance_id', '$1', size)}`

/**
 * The states instances serve under (schema.ts), in the order asked, one read: for the reads that renew a
 * serving instance's memo (`stateReads`); a cold instance's state comes with its keys (keys.ts). An
 * instance without a row does not serve.
 */
export function servingStates(core: Core): (instanceIds: readonly string[]) => Promise<WorkspaceState[]> {
  const texts = { one: STATES_OF(core.store.dialect, 'one'), many: STATES_OF(core.store.dialect, 'many') }
  return async (instanceIds) => {
    const size = listSize(instanceIds)
    const rows = await core.store.query<{
      instanceId: string
      serving: boolean | number
      dataPlaneRps: number | string | null
    }>(texts[size], [listParam(instanceIds, size)])
    const byId = new Map(rows.map((row) => [row.instanceId, row]))
    return instanceIds.map((id) => {
      const row = byId.get(id)
      return row ? servingState(row.serving, row.dataPlaneRps) : { active: false, dataPlaneRps: null }
    })
  }
}
