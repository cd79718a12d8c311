import { FormatRegistry } from '@sinclair/typebox'
import { t } from 'elysia'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The shape of a workspace id (`format: 'uuid'`), for code that meets one before validation does. */
export const isUuid = (value: string): boolean => UUID.test(value)

/**
 * @elysiajs/openapi replaces TypeBox's `uuid` check with one that builds a validator per call
 * (~7 µs, on every `{workspace_id}`); put back a plain RFC 4122 pattern.
 */
export function registerFormats(): void {
  FormatRegistry.Set('uuid', isUuid)
}

/**
 * A resource id in a path (`app_…`, `usr_…`, `mk_…`, `ten_…`): letters, digits, `_` and `-`, at most
 * 64. Anything else names no resource and is refused by validation (422) before any query:
 * PostgreSQL refuses a NUL in text with an error, not an empty answer.
 */
export const resourceId = () =>
  t.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'A resource id: letters, digits, `_` and `-`' })
