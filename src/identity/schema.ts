import { boolean, epochMs, index, integer, json, primaryKey, table, text, uniqueIndex } from '../db/columns'

// The identity plane's tables. Every row is scoped by `instance_id`: a workspace id, or `platform`
// for the instance that holds dashboard users.

/** Signing keys per instance. The private JWK is sealed under the master key. */
export const instanceKeys = table(
  'instance_keys',
  {
    kid: text('kid').primaryKey(),
    instanceId: text('instance_id').notNull(),
    alg: text('alg').notNull(),
    publicJwk: json<JsonWebKey>('public_jwk').notNull(),
    privateJwkSealed: text('private_jwk_sealed').notNull(),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [index('instance_keys_instance_idx').on(t.instanceId)],
)

/**
 * Cookie-signing keys per instance, sealed (random keys per boot would end every session), and the
 * state the instance serves under: whether it serves (its workspace is `active`), at what data-plane
 * rate (its own on a paid plan; null: the configured default). The database keeps the latter from
 * the workspace's row, on every write of either row (triggers of migration `instance_serving`,
 * whoever writes: the services, `store copy`, an operator's SQL), so that a cold instance's state
 * and keys are one read (keys.ts) and the plane reads no feature's table. The platform's row has no
 * workspace: it serves regardless (pool.ts).
 */
export const instanceSecrets = table('instance_secrets', {
  instanceId: text('instance_id').primaryKey(),
  cookieKeysSealed: text('cookie_keys_sealed').notNull(),
  createdAt: epochMs('created_at').notNull(),
  serving: boolean('serving').notNull().default(false),
  dataPlaneRps: integer('data_plane_rps'),
})

/**
 * The one table for every oidc-provider model but Client (sessions, grants, codes, tokens…).
 * `id` and `user_code` are keyed hashes of what was handed out (payload-keys.ts) and
 * the payload holds no usable credential: a copy of this table opens nothing.
 */
export const oidcPayloads = table(
  'oidc_payloads',
  {
    instanceId: text('instance_id').notNull(),
    model: text('model').notNull(),
    id: text('id').notNull(),
    payload: text('payload').notNull(),
    grantId: text('grant_id'),
    userCode: text('user_code'),
    uid: text('uid'),
    /** The account a session, grant, code or token stands for: revoked together on a password change. */
    accountId: text('account_id'),
    expiresAt: epochMs('expires_at'),
    consumedAt: epochMs('consumed_at'),
    /** Device codes: when the client last polled (RFC 8628 §3.5 slow_down). */
    polledAt: epochMs('polled_at'),
  },
  (t) => [
    primaryKey({ columns: [t.instanceId, t.model, t.id] }),
    index('oidc_payloads_grant_idx').on(t.instanceId, t.grantId),
    index('oidc_payloads_user_code_idx').on(t.instanceId, t.userCode),
    index('oidc_payloads_uid_idx').on(t.instanceId, t.uid),
    index('oidc_payloads_account_idx').on(t.instanceId, t.accountId),
    index('oidc_payloads_expires_idx').on(t.expiresAt),
  ],
)

/** End users of an instance (for the platform instance: dashboard users). */
export const accounts = table(
  'accounts',
  {
    id: text('id').primaryKey(),
    instanceId: text('instance_id').notNull(),
    email: text('email').notNull(),
    emailVerified: boolean('email_verified').notNull().default(false),
    name: text('name').notNull().default(''),
    /** argon2id (Bun.password); null for accounts that only sign in through an external IdP. */
    passwordHash: text('password_hash'),
    isPlatformAdmin: boolean('is_platform_admin').notNull().default(false),
    /**
     * Bumped by every sign-out everywhere (a password change, an MFA reset: `signOutEverywhere`).
     * Platform access tokens carry the epoch they were issued in (`auth_epoch`); the control plane
     * refuses one from an earlier epoch.
     */
    authEpoch: integer('auth_epoch').notNull().default(0),
    /**
     * `invited`: created by an admin's invitation (users.ts) and not accepted yet; it has no password
     * and cannot sign in. Accepting the invitation (or choosing a password) makes it `active`.
     */
    status: text('status').$type<'active' | 'invited'>().notNull().default('active'),
    invitedAt: epochMs('invited_at'),
    /** The last hosted sign-in (finishLogin). */
    lastSignInAt: epochMs('last_sign_in_at'),
    /** The external IdP the account came from; null for password accounts (no IdP yet). */
    viaIdp: text('via_idp'),
    createdAt: epochMs('created_at').notNull(),
    updatedAt: epochMs('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('accounts_instance_email_idx').on(t.instanceId, t.email),
    // The users listing pages by id (time-ordered) within an instance.
    index('accounts_instance_id_idx').on(t.instanceId, t.id),
  ],
)

/**
 * An account's identity at an external IdP (`subject`, the IdP's `sub` or GitHub's user id): a
 * sign-in through that IdP finds the account by it, whatever the email says later. `idp_id` is the
 * idps feature's id, or the type for the platform instance's IdPs from configuration.
 */
export const accountLinks = table(
  'account_links',
  {
    instanceId: text('instance_id').notNull(),
    idpId: text('idp_id').notNull(),
    subject: text('subject').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.instanceId, t.idpId, t.subject] }),
    index('account_links_account_idx').on(t.accountId),
  ],
)

/** Single-use tokens mailed to users (email verification, password reset, invitation), stored hashed. */
export const accountTokens = table(
  'account_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    instanceId: text('instance_id').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    purpose: text('purpose').$type<'verify_email' | 'reset_password' | 'invite'>().notNull(),
    /** Where to continue after the token is used (an interaction uid), if any. */
    interactionUid: text('interaction_uid'),
    expiresAt: epochMs('expires_at').notNull(),
    usedAt: epochMs('used_at'),
  },
  (t) => [index('account_tokens_account_idx').on(t.accountId)],
)

/** Failed sign-in counters for brute-force throttling, per account and per client IP. */
export const loginThrottle = table('login_throttle', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull(),
  /** Attempts reserved and still being checked (counted against the limit until they resolve). */
  pending: integer('pending').notNull().default(0),
  windowStart: epochMs('window_start').notNull(),
  lockedUntil: epochMs('locked_until'),
})

/**
 * Start-up steps that rewrite data a schema migration cannot (they need the master key), done
 * once per store: checking a row here is cheaper than scanning for rows still to rewrite.
 */
export const upgradeSteps = table('upgrade_steps', {
  name: text('name').primaryKey(),
  doneAt: epochMs('done_at').notNull(),
})

/**
 * An account's authenticator app (TOTP, RFC 6238). The secret is sealed under the master key;
 * `confirmed_at` is null while enrolment waits for the first code. `last_used_step` is the time
 * step of the last accepted code: a code of that step or an earlier one is refused (replay).
 */
export const accountTotp = table('account_totp', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  instanceId: text('instance_id').notNull(),
  secretSealed: text('secret_sealed').notNull(),
  confirmedAt: epochMs('confirmed_at'),
  lastUsedStep: epochMs('last_used_step'),
  createdAt: epochMs('created_at').notNull(),
})

/** Single-use recovery codes of an account with MFA, stored as keyed hashes (mfa/recovery.ts). */
export const accountRecoveryCodes = table(
  'account_recovery_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    instanceId: text('instance_id').notNull(),
    usedAt: epochMs('used_at'),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [index('account_recovery_codes_account_idx').on(t.accountId)],
)

/** An account's passkeys (WebAuthn credentials): the public key and what the authenticator said of itself. */
export const accountPasskeys = table(
  'account_passkeys',
  {
    /** The credential id, base64url. */
    credentialId: text('credential_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    instanceId: text('instance_id').notNull(),
    /** COSE public key, base64url. */
    publicKey: text('public_key').notNull(),
    /** The signature counter, a uint32 (a double holds it; PostgreSQL's integer would not). */
    counter: epochMs('counter').notNull(),
    transports: json<string[]>('transports').notNull(),
    /** `singleDevice` (device-bound: amr `hwk`) or `multiDevice` (synced: amr `swk`). */
    deviceType: text('device_type').$type<'singleDevice' | 'multiDevice'>().notNull(),
    backedUp: boolean('backed_up').notNull(),
    createdAt: epochMs('created_at').notNull(),
    lastUsedAt: epochMs('last_used_at'),
  },
  (t) => [index('account_passkeys_account_idx').on(t.accountId)],
)

/**
 * WebAuthn challenges handed to a browser, single-use and short-lived: kept in the store, not in
 * memory, since the ceremony's second request may reach another node. `account_id` is null for a
 * password-less sign-in (the credential names the account).
 */
export const webauthnChallenges = table(
  'webauthn_challenges',
  {
    challenge: text('challenge').primaryKey(),
    instanceId: text('instance_id').notNull(),
    accountId: text('account_id').references(() => accounts.id, { onDelete: 'cascade' }),
    purpose: text('purpose').$type<'register' | 'authenticate'>().notNull(),
    expiresAt: epochMs('expires_at').notNull(),
  },
  (t) => [index('webauthn_challenges_expires_idx').on(t.expiresAt)],
)
