import { epochMs, index, table, text } from '../../db/columns'
import { accounts } from '../../identity'

/** Dashboard sessions of the control plane. The id is random; only its hash is stored. */
export const sessions = table(
  'sessions',
  {
    idHash: text('id_hash').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** Per-session CSRF token for dashboard mutations. */
    csrfToken: text('csrf_token').notNull(),
    /** The ID token from the callback, sealed: sent as id_token_hint at logout. */
    idTokenSealed: text('id_token_sealed'),
    createdAt: epochMs('created_at').notNull(),
    expiresAt: epochMs('expires_at').notNull(),
    lastSeenAt: epochMs('last_seen_at').notNull(),
  },
  (t) => [index('sessions_account_idx').on(t.accountId)],
)

/**
 * Pending control-plane logins: state, nonce and PKCE verifier between /login and /callback. The
 * verifier is sealed (with a code, it is what redeems a login); the nonce is not a secret: it
 * travels in the authorization URL and comes back in the ID token.
 */
export const loginRequests = table('login_requests', {
  state: text('state').primaryKey(),
  nonce: text('nonce').notNull(),
  codeVerifierSealed: text('code_verifier').notNull(),
  next: text('next'),
  createdAt: epochMs('created_at').notNull(),
})
