import type { Core } from '../../src/core'
import { createSession, sessionCookieName } from '../../src/features/auth/sessions'
import { workspaceMembers } from '../../src/features/workspaces/schema'
import { createMachineTokenIssuer, PLATFORM, signUp } from '../../src/identity'
import type { Json } from './users'

/** A platform account with a dashboard session (its cookie and CSRF token). */
export interface Person {
  id: string
  cookie: string
  csrf: string
}

/** Who calls the API: a person by session, or a bearer (a machine key's access token). */
export type Caller = Person | { bearer: string }

/** A new platform account signed in, a member of `role.ws` with `role.role` when given. */
export async function person(
  core: Core,
  role?: { ws: string; role: 'admin' | 'developer' | 'viewer' },
): Promise<Person> {
  const email = `p-${crypto.randomUUID()}@example.com`
  const account = await signUp(core, PLATFORM, { email, password: 'a long password 1' })
  if (role) {
    const now = core.clock.now()
    await core.db.insert(workspaceMembers).values({
      workspaceId: role.ws,
      accountId: account.id,
      role: role.role,
      createdAt: now,
      updatedAt: now,
    })
  }
  const { cookie, csrfToken } = await createSession(core, account.id, null)
  return { id: account.id, cookie: `${sessionCookieName(core)}=${cookie}`, csrf: csrfToken }
}

/** A machine key's access token on `workspaceId` with `scopes`, as the jwt-bearer exchange issues it. */
export async function keyCaller(core: Core, workspaceId: string, scopes: string[]): Promise<Caller> {
  const issue = createMachineTokenIssuer(core)
  return { bearer: await issue({ keyId: `mk_${crypto.randomUUID()}`, workspaceId, scopes }, 900) }
}

/** The headers that say who calls. */
export const credentials = (who: Caller): Record<string, string> =>
  'bearer' in who
    ? { authorization: `Bearer ${who.bearer}` }
    : { cookie: who.cookie, 'x-csrf-token': who.csrf }

/** A JSON call on the server at `baseUrl`; `body` is sent as JSON. */
export async function callApi(baseUrl: string, who: Caller, method: string, path: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      ...credentials(who),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Json, headers: res.headers }
}
