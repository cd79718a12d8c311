import { epochMs, index, json, primaryKey, table, text } from '../../db/columns'

/** Why a key stopped working: deleted by a person or a key, or rotated out after its 24 hours. */
export type RevokedReason = 'deleted' | 'rotated'

/**
 * Machine keys (DESIGN "Machine keys"): the public half of an ES256 key pair whose private half the
 * holder keeps (the key file). A revoked key keeps its row for a while, so an exchange can say why
 * it is refused; the periodic purge removes it later.
 */
export const machineKeys = table(
  'machine_keys',
  {
    /** `mk_<ULID>`; also the key file's `key_id` and the assertion's `kid`, `iss` and `sub`. */
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    name: text('name').notNull(),
    scopes: json<string[]>('scopes').notNull(),
    /** The public key as a JWK (P-256); the private key is never stored. */
    publicJwk: text('public_jwk').notNull(),
    expiresAt: epochMs('expires_at'),
    createdAt: epochMs('created_at').notNull(),
    /** `user:<id>` or `key:<id>`: who created (or rotated into) it. */
    createdBy: text('created_by').notNull(),
    lastUsedAt: epochMs('last_used_at'),
    /** Set by a rotation: the old key works until then, and a job revokes it at that time. */
    revokesAt: epochMs('revokes_at'),
    /** The key that replaced this one in a rotation. */
    replacedBy: text('replaced_by'),
    revokedAt: epochMs('revoked_at'),
    revokedReason: text('revoked_reason').$type<RevokedReason>(),
  },
  (t) => [index('machine_keys_workspace_idx').on(t.workspaceId, t.createdAt)],
)

/**
 * Assertion ids (`jti`) already exchanged (RFC 7523 §3 item 7): the primary key makes the second
 * use of one fail, on every node at once. Kept until the assertion's own `exp`, then purged.
 */
export const machineKeyAssertions = table(
  'machine_key_assertions',
  {
    keyId: text('key_id').notNull(),
    jti: text('jti').notNull(),
    workspaceId: text('workspace_id').notNull(),
    expiresAt: epochMs('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.keyId, t.jti] }),
    index('machine_key_assertions_expiry_idx').on(t.expiresAt),
  ],
)
