import { epochMs, index, table, text } from '../../db/columns'

/**
 * Started "Try sign-in" runs: the state, nonce and PKCE verifier between the dashboard's
 * authorization request and its callback. The key is a hash of the dashboard session and the
 * state, so a callback finds its row only in the session that started it; rows are rows (not a
 * node's memory), so the callback may land on any node. The verifier is sealed, as in
 * `login_requests` (auth/schema.ts).
 */
export const trySignIns = table(
  'try_sign_ins',
  {
    key: text('key').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    nonce: text('nonce').notNull(),
    codeVerifierSealed: text('code_verifier').notNull(),
    createdAt: epochMs('created_at').notNull(),
  },
  (t) => [index('try_sign_ins_workspace_idx').on(t.workspaceId)],
)
