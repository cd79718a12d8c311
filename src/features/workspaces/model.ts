import { t } from 'elysia'
import { nameField } from '../../shared/names'

export namespace WorkspaceModel {
  export const state = t.Union(
    [t.Literal('provisioning'), t.Literal('provisioning_failed'), t.Literal('active'), t.Literal('deleting')],
    { description: 'Poll until `active`' },
  )

  const name = nameField(100)
  export const create = t.Object({ name }, { additionalProperties: false })
  export const update = t.Object({ name }, { additionalProperties: false })

  export const out = t.Object({
    id: t.String({ format: 'uuid' }),
    name: t.String(),
    state,
    plan: t.Union([t.Literal('free'), t.Literal('pro'), t.Literal('enterprise')]),
    auth_url: t.String({ description: 'Issuer of the workspace identity instance' }),
    created_at: t.String(),
    updated_at: t.String(),
    provisioning_error: t.Nullable(t.String()),
  })

  export const list = t.Object({ items: t.Array(out), total: t.Integer() })

  export const params = t.Object({ workspace_id: t.String({ format: 'uuid' }) })

  export const deleted = t.Object({ id: t.String(), state: t.Literal('deleting') })
}
