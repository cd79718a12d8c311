import type { Core } from '../../core'
import { inStrings, type ListSize, listParam, listSize } from '../../db/in-strings'
import type { Dialect } from '../../db/store'
import { loggable } from '../../db/store'
import { type ClientSource, clientRecordOf } from '../../identity'

interface ClientRow {
  instanceId: string
  clientId: string
  /** The client record as the view makes it (JSON text). */
  record: string
}

/**
 * The statement of each store, for one client or many: the records of the view
 * instance_client_records (migration instance_client_records), the shape a cold instance's load reads too.
 */
const BY_CLIENT_IDS = (dialect: Dialect, size: ListSize) => `
  SELECT instance_id AS "instanceId", client_id AS "clientId", ${dialect === 'postgres' ? 'record::text' : 'record'} AS record
  FROM instance_client_records
  WHERE ${inStrings(dialect, 'client_id', '$1', size)} AND ${inStrings(dialect, 'instance_id', '$2', size)}`

/**
 * The apps of workspaces as the clients of their identity instances, handed to the identity plane at
 * start-up (server.ts). A token request whose client the plane has not seen lately reads here (and
 * a node's busy instances read theirs again, gathered), in raw SQL, each app as the record the
 * identity plane decodes (`clientRecordOf`); the plane remembers what it read until `core.instances` says the
 * workspace's apps changed. Client ids are unique across workspaces (apps_client_id_idx): rows are
 * looked up by id among the asking workspaces', and one belongs to the instance that asked for it
 * only if its workspace is that one.
 */
export function appClientSource(core: Core): ClientSource {
  const texts = {
    one: BY_CLIENT_IDS(core.store.dialect, 'one'),
    many: BY_CLIENT_IDS(core.store.dialect, 'many'),
  }
  return {
    async find(wanted) {
      // One statement for both lists: several clients of one workspace still go as two lists.
      const size = listSize(wanted)
      const workspaces = [...new Set(wanted.map((w) => w.instanceId))]
      const rows = await core.store.query<ClientRow>(texts[size], [
        listParam(
          wanted.map((w) => w.clientId),
          size,
        ),
        listParam(workspaces, size),
      ])
      const byId = new Map(rows.map((row) => [row.clientId, row]))
      return wanted.map(({ instanceId, clientId }) => {
        const row = byId.get(clientId)
        if (!row || row.instanceId !== instanceId) return null
        // An app whose row makes no record (written by hand) is no client: its token requests are
        // refused, the others' of the same read answered.
        try {
          return clientRecordOf(row.record)
        } catch (e) {
          core.log.error('an app does not make a client record', { client_id: clientId, ...loggable(e) })
          return null
        }
      })
    },
  }
}
