import { t } from 'elysia'

/** DESIGN "Audit log": one entry per mutating action on a workspace, by a member or a machine key. */
export namespace AuditModel {
  export const params = t.Object({ workspace_id: t.String({ format: 'uuid' }) })

  /** The filters, shared by the JSON list, the CSV export and the dashboard page. */
  export const filters = {
    actor: t.Optional(
      t.String({ maxLength: 80, description: 'Exactly this actor: `user:<account id>` or `key:<key id>`' }),
    ),
    action: t.Optional(
      t.String({
        maxLength: 80,
        description:
          'Exactly this action (`app.created`), or every action starting with a prefix when it ends in `.*` ' +
          '(`app.*`: `app.created` and `app.deleted`; `user.*`, `member.*`, `workspace.*`, `login_policy.*`)',
      }),
    ),
    since: t.Optional(
      t.String({
        maxLength: 40,
        description:
          'ISO 8601 timestamp (`2025-01-31T12:00:00Z`, an offset, or a date): entries at or after it; UTC when no offset is given',
      }),
    ),
    until: t.Optional(
      t.String({
        maxLength: 40,
        description: 'ISO 8601 timestamp, as `since`: entries strictly before it',
      }),
    ),
  }

  export const listQuery = t.Object({
    ...filters,
    // 1..200, checked by the service: Elysia reports a bound broken while it coerces a query value
    // without the property's name, so the 422 could not say which field it was.
    limit: t.Optional(t.Integer({ description: 'Page size, 1..200 (default 50)' })),
    cursor: t.Optional(t.String({ maxLength: 200, description: 'Opaque, from `next_cursor`' })),
    format: t.Optional(
      t.Union([t.Literal('json'), t.Literal('csv')], {
        description:
          '`csv`: every matching entry (not paged) as a CSV download; `limit` and `cursor` are ignored',
      }),
    ),
  })

  export const item = t.Object({
    id: t.String({ description: 'aud_ + ULID' }),
    at: t.String({ description: 'ISO 8601 UTC, to the millisecond' }),
    actor: t.String({ description: '`user:<account id>` or `key:<key id>`' }),
    action: t.String({ description: '`<resource>.<verb>`, e.g. `app.created`, `member.role_changed`' }),
    target: t.Object({ type: t.String(), id: t.String() }),
    ip: t.Nullable(t.String({ description: "The caller's address (behind trusted proxies)" })),
    user_agent: t.Nullable(t.String()),
    changes: t.Record(t.String(), t.Object({ from: t.Optional(t.Unknown()), to: t.Optional(t.Unknown()) }), {
      description:
        'The fields the action changed, each with its value before (`from`) and after (`to`); never a secret',
    }),
  })

  export const list = t.Object({
    items: t.Array(item, { description: 'Newest first' }),
    total: t.Integer({ description: 'Entries matching the filters, all pages together' }),
    next_cursor: t.Nullable(
      t.String({ description: 'Pass as `cursor` for the next (older) page; null on the last' }),
    ),
  })

  export type ListQuery = typeof listQuery.static
  export type Item = typeof item.static
  export type List = typeof list.static
}
