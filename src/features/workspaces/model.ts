import { t } from 'elysia'
import { nameField } from '../../shared/display-names'
import { resourceId } from '../../shared/formats'

export namespace WorkspaceModel {
  export const state = t.Union(
    [t.Literal('provisioning'), t.Literal('provisioning_failed'), t.Literal('active'), t.Literal('deleting')],
    { description: 'Poll until `active`' },
  )

  const name = nameField(100)
  export const create = t.Object({ name }, { additionalProperties: false })
  /** The identity plane's requests per second for this workspace (Pro and above). */
  const dataPlaneRps = t.Nullable(
    t.Integer({
      minimum: 1,
      maximum: 10_000,
      description:
        "Identity-plane requests per second for this workspace's instance (its burst scales alike), " +
        'on Pro and above (422 on Free); null returns to the default (50/s, burst 200)',
    }),
  )
  export const update = t.Object(
    { name: t.Optional(name), data_plane_rps: t.Optional(dataPlaneRps) },
    { additionalProperties: false },
  )
  export type Update = typeof update.static

  export const out = t.Object({
    id: t.String({ format: 'uuid' }),
    name: t.String(),
    state,
    plan: t.Union([t.Literal('free'), t.Literal('pro'), t.Literal('enterprise')]),
    auth_url: t.String({ description: 'Issuer of the workspace identity instance' }),
    created_at: t.String(),
    updated_at: t.String(),
    provisioning_error: t.Nullable(t.String()),
    data_plane_rps: t.Nullable(t.Integer({ description: 'null: the default data-plane rate' })),
  })

  export const list = t.Object({ items: t.Array(out), total: t.Integer() })

  export const params = t.Object({ workspace_id: t.String({ format: 'uuid' }) })

  export const deleted = t.Object({ id: t.String(), state: t.Literal('deleting') })

  /** SPEC: deleting a workspace needs a confirmation; the caller types its name back. */
  export const remove = t.Object(
    {
      confirm: t.String({
        maxLength: 200,
        description: "The workspace's exact name (case and spaces count); anything else answers 422",
        errorMessage: { maxLength: "Type the workspace's exact name." },
      }),
    },
    { additionalProperties: false },
  )
}

/** DESIGN "Who may do what": a workspace's members (platform accounts) and pending invitations. */
export namespace MemberModel {
  export const role = t.Union(
    [t.Literal('owner'), t.Literal('admin'), t.Literal('developer'), t.Literal('viewer')],
    {
      description:
        'owner and admin hold workspace:admin (only an owner grants, changes or removes the owner role), developer workspace:write, viewer workspace:read',
      errorMessage: { anyOf: 'Choose a role.' },
    },
  )

  export const add = t.Object(
    {
      email: t.String({
        minLength: 3,
        maxLength: 320,
        pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$',
        description:
          'A platform account with this address joins at once; any other address is invited by mail',
        errorMessage: { pattern: 'Enter a valid email address.', minLength: 'Enter an email address.' },
      }),
      role,
    },
    { additionalProperties: false },
  )

  export const update = t.Object({ role }, { additionalProperties: false })

  export const out = t.Object({
    account_id: t.Nullable(t.String({ description: 'The platform account; null while invited' })),
    invitation_id: t.Nullable(
      t.String({
        description: 'inv_ + ULID while invited (cancel it with DELETE …/members/invitations/{id})',
      }),
    ),
    email: t.String(),
    name: t.String({ description: 'Empty while invited' }),
    role,
    status: t.Union([t.Literal('active'), t.Literal('invited')]),
    created_at: t.String({ description: 'When they joined, or were invited' }),
    expires_at: t.Nullable(t.String({ description: 'Invited only: the link works until then (7 days)' })),
  })

  export const list = t.Object({ items: t.Array(out), total: t.Integer() })

  export const params = t.Object({
    workspace_id: t.String({ format: 'uuid' }),
    account_id: resourceId(),
  })

  export const invitationParams = t.Object({
    workspace_id: t.String({ format: 'uuid' }),
    invitation_id: resourceId(),
  })

  export const deleted = t.Object({ deleted: t.Boolean() })

  export type Role = typeof role.static
  export type Add = typeof add.static
  export type Out = typeof out.static
}
