import type { ClientRecord } from './deps'

const TYPES: readonly string[] = ['web', 'spa', 'native'] satisfies ClientRecord['type'][]

/**
 * A client record as the database makes it (the view `instance_client_records`, migration
 * instance_client_records: one JSON object per app, its three lists JSON text inside it), read by
 * both of the plane's client reads: by id (the apps feature's ClientSource, the record as text) and
 * with a cold instance's load (keys.ts, an element of the parsed aggregate). Throws on a malformed
 * record, list or type (an unknown type is no public client: it fails closed); the caller answers
 * that client as none.
 */
export function clientRecordOf(record: unknown): ClientRecord {
  const r = (typeof record === 'string' ? JSON.parse(record) : record) as Record<string, unknown>
  const list = (value: unknown, field: string): string[] => {
    const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value
    if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string'))
      throw new Error(`client ${String(r.clientId)}: ${field} is not a list of strings`)
    return parsed
  }
  if (typeof r.clientId !== 'string' || typeof r.name !== 'string')
    throw new Error('a client record without its id or name')
  if (typeof r.type !== 'string' || !TYPES.includes(r.type))
    throw new Error(`client ${r.clientId}: no client type ${String(r.type)}`)
  return {
    clientId: r.clientId,
    name: r.name,
    clientSecretHash: typeof r.clientSecretHash === 'string' ? r.clientSecretHash : null,
    previousSecret:
      typeof r.previousSecretHash === 'string' && typeof r.previousSecretExpiresAt === 'number'
        ? { hash: r.previousSecretHash, until: r.previousSecretExpiresAt }
        : null,
    type: r.type as ClientRecord['type'],
    redirectUris: list(r.redirectUris, 'redirectUris'),
    postLogoutRedirectUris: list(r.postLogoutRedirectUris, 'postLogoutRedirectUris'),
    extraGrants: list(r.extraGrants, 'extraGrants'),
  }
}

/**
 * The clients a load read, as the database aggregated them (a JSON array of records, as text; null
 * for none): each record that decodes. One that does not is left out, to the read by id, which
 * logs it and answers it as no client.
 */
export function loadedClientRecords(aggregate: string | null): ClientRecord[] {
  const records: unknown = aggregate === null ? null : JSON.parse(aggregate)
  if (!Array.isArray(records)) return []
  const out: ClientRecord[] = []
  for (const record of records) {
    try {
      out.push(clientRecordOf(record))
    } catch {
      // Not taken: its token requests read it by id and meet the same failure there.
    }
  }
  return out
}
