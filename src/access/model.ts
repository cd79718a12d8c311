// Who calls and who did it: the principals the guard finds and the actor an audit entry names.
// Plain types, no HTTP and no identity plane, so that services and the audit log can name them
// without depending on the guard (and the guard on no feature).

/**
 * What a person's principal carries of their platform account: the identity plane's `Account`
 * satisfies it, so a session's account is handed over as it is read.
 */
export interface PrincipalAccount {
  id: string
  email: string
  emailVerified: boolean
  name: string
  isPlatformAdmin: boolean
}

/** What the guard needs to know of a workspace. */
export interface WorkspaceRef {
  id: string
}

/** A dashboard session as routes see it: logout and CSRF need it. */
export interface PrincipalSession {
  idHash: string
  csrfToken: string
  idToken: () => string | null
}

/** A person: a platform account, by dashboard session or platform access token. */
export interface UserPrincipal {
  kind: 'user'
  /** `user:<account id>`: who the audit log names. */
  id: string
  account: PrincipalAccount
  via: 'session' | 'bearer'
  /** Present for session callers. */
  session?: PrincipalSession
}

/** A machine key, by an access token from the jwt-bearer exchange: one workspace, fixed scopes. */
export interface KeyPrincipal {
  kind: 'key'
  /** `key:<key id>`: who the audit log names. */
  id: string
  key: { id: string; workspaceId: string; scopes: string[] }
  via: 'bearer'
  session?: undefined
}

/**
 * Who is calling. Routes ask for a scope on the path's workspace; what the principal holds there is
 * read once per request by the guard (`findAccess`), so a role change acts on the next request.
 */
export type Principal = UserPrincipal | KeyPrincipal

/** Who did it and from where, as the audit log records it: what the guard hands every route. */
export interface Actor {
  /** `user:<account id>` or `key:<key id>`. */
  id: string
  ip: string | null
  userAgent: string | null
}
