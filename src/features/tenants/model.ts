import { t } from 'elysia'
import { nameField } from '../../shared/display-names'
import { resourceId } from '../../shared/formats'
import { nextCursorField, pageQuery } from '../../shared/pagination'
import { UserModel } from '../users/model'

/** DESIGN "Tenants": a slug is 1..63 lower-case letters, digits and inner hyphens (a DNS label). */
const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'
/** What a tenant's metadata may weigh, as UTF-8 JSON. */
export const METADATA_MAX_BYTES = 4096
/** Items of one `tenants:batch` call (SPEC "Batch API"). */
const BATCH_MAX_ITEMS = 100

/** DESIGN "Tenants": a workspace's customers (organisations), their members and the batch API. */
export namespace TenantModel {
  export const slug = t.String({
    pattern: SLUG_PATTERN,
    description:
      'Unique in the workspace and never changed: it names the tenant in `tenant:<slug>:read|write` scopes and the `tenants` claim',
    errorMessage: {
      pattern:
        'Use 1 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or digit.',
    },
  })

  export const metadata = t.Record(t.String(), t.Unknown(), {
    description: 'A JSON object of your own, at most 4 KiB',
  })

  /**
   * Metadata as sent: checked to be a JSON object by the service. Declared as an object, Elysia's
   * body normaliser would copy an array or a string into one (`[1]` → `{"0": 1}`) before validating.
   */
  const metadataIn = t.Unknown({ description: 'A JSON object of your own, at most 4 KiB; null is `{}`' })

  export const create = t.Object(
    { slug, name: nameField(200), metadata: t.Optional(metadataIn) },
    { additionalProperties: false },
  )
  export type Create = typeof create.static

  export const update = t.Object(
    { name: t.Optional(nameField(200)), metadata: t.Optional(metadataIn) },
    { additionalProperties: false },
  )
  export type Update = typeof update.static

  export const out = t.Object({
    id: t.String({ description: 'ten_ + ULID' }),
    slug: t.String(),
    name: t.String(),
    metadata,
    created_at: t.String(),
    updated_at: t.String(),
  })
  export type Out = typeof out.static

  export const list = t.Object({
    items: t.Array(out),
    total: t.Integer({ description: 'Tenants matching `q` that the caller may see, all pages together' }),
    next_cursor: nextCursorField,
  })

  export const listQuery = pageQuery('Slug or name prefix, case-insensitive')

  export const params = t.Object({
    workspace_id: t.String({ format: 'uuid' }),
    tenant_id: resourceId(),
  })

  export const memberParams = t.Composite([params, t.Object({ user_id: resourceId() })])

  export const addMember = t.Object({ user_id: resourceId() }, { additionalProperties: false })

  /** An invitation by email (the users' UserInvite): what a tenant key sends instead of a user id. */
  export const invite = UserModel.invite
  export type Invite = typeof invite.static

  /** The same for every address: nothing says whether the workspace has a user with it. */
  export const invited = t.Object({
    email: t.String({ description: 'The address invited, normalised' }),
    status: t.Literal('invited'),
    expires_at: t.String({ description: 'The invitation holds for 7 days' }),
  })
  export type Invited = typeof invited.static

  export const member = t.Object({
    user_id: t.String(),
    email: t.String(),
    name: t.String(),
    added_at: t.String(),
  })
  export type Member = typeof member.static

  export const members = t.Object({
    items: t.Array(member),
    total: t.Integer(),
    next_cursor: nextCursorField,
  })

  export const membersQuery = t.Omit(listQuery, ['q'])

  export const deleted = t.Object({ deleted: t.Literal(true) })

  /** The path of `tenants:batch`: Elysia reads its colon as a parameter, `batch`, whose value is the literal. */
  export const batchParams = t.Object({
    workspace_id: t.String({ format: 'uuid' }),
    batch: t.Literal(':batch'),
  })

  /** The body of `tenants:batch`: each item is checked on its own, so one bad item fails alone. */
  export const batch = t.Array(t.Unknown({ description: 'A TenantCreate' }), {
    minItems: 1,
    maxItems: BATCH_MAX_ITEMS,
    description: `1..${BATCH_MAX_ITEMS} TenantCreate objects; each is validated and created on its own`,
  })

  /** Why one item of a batch failed: the 422 detail it would have had alone. */
  export const itemError = t.Object({
    type: t.String({ description: 'e.g. `string_pattern_mismatch`, `string_too_long`, `slug_taken`' }),
    msg: t.String(),
    loc: t.Array(t.Union([t.String(), t.Integer()]), { description: '`["body", index, field]`' }),
  })
  export type ItemError = typeof itemError.static

  export const batchResult = t.Object({
    results: t.Array(
      t.Union([
        t.Object({ index: t.Integer(), status: t.Literal('created'), tenant: out }),
        t.Object({ index: t.Integer(), status: t.Literal('error'), error: itemError }),
      ]),
      { description: 'One per item, in the order sent' },
    ),
    created: t.Integer(),
    failed: t.Integer(),
  })
  export type BatchResult = typeof batchResult.static
}
