import { and, count, desc, eq, sql } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { preparedRead } from '../../db/prepared'
import { brokerRedirectUri, DEFAULT_IDP_SCOPES, deleteIdpLinks, type ExternalIdp } from '../../identity'
import { isoTime } from '../../shared/clock'
import { displayName } from '../../shared/display-names'
import { appError, forbidden } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { outboundUrlProblem } from '../../shared/outbound'
import type { Workspace } from '../workspaces/service'
import { IdpErrors } from './errors'
import type { IdpModel } from './model'
import { type IdpType, idps } from './schema'

type Idp = typeof idps.$inferSelect

const MAX_IDPS = 20

/** What a type is called on its button, unless the creator says otherwise. */
const DEFAULT_NAMES: Record<IdpType, string> = {
  google: 'Google',
  microsoft: 'Microsoft',
  github: 'GitHub',
  oidc: 'Single sign-on',
}

/** The sealing context of an IdP's client secret: a sealed value moved to another row does not open. */
const clientSecretContext = (idpId: string) => `idp:${idpId}`

/** Where the provider sends the user back: one URL per IdP, on the workspace's instance. */
export const redirectUriOf = (core: Pick<Core, 'config'>, workspaceId: string) =>
  brokerRedirectUri(core.config, workspaceId)

function idpOut(core: Pick<Core, 'config'>, i: Idp): IdpModel.Out {
  return {
    id: i.id,
    type: i.type,
    name: i.name,
    client_id: i.clientId,
    issuer: i.issuer,
    scopes: i.scopes,
    redirect_uri: redirectUriOf(core, i.workspaceId),
    trust_email: i.trustEmail,
    trust_mfa: i.trustMfa,
    created_at: isoTime(i.createdAt),
  }
}

const inWorkspace = (workspaceId: string, idpId: string) =>
  and(eq(idps.workspaceId, workspaceId), eq(idps.id, idpId))

/**
 * A workspace's external identity providers (DESIGN "IdPs", SPEC "Login policy, IdPs, users"):
 * `workspace:write` to create and delete (the guard's), `workspace:admin` to trust an IdP's addresses
 * or second factors. Creating activates: the IdP is on the
 * sign-in page when the 201 returns. Deleting takes it off the page, then deletes it; both steps
 * are idempotent. The client secret is sealed and never shown again.
 */
export function createIdpService(core: Core) {
  const policy = core.config.idps

  /** The issuer of an `oidc` IdP as stored (parsed, no trailing slash), or a 422. */
  function checkedIssuer(input: IdpModel.Create): string | null {
    if (input.type !== 'oidc') {
      if (input.issuer !== undefined)
        throw appError(IdpErrors.ISSUER_NOT_ALLOWED, 422, { loc: ['body', 'issuer'] })
      return null
    }
    if (input.issuer === undefined)
      throw appError(IdpErrors.ISSUER_REQUIRED, 422, { loc: ['body', 'issuer'] })
    const problem = outboundUrlProblem(input.issuer, policy)
    if (problem) throw appError(IdpErrors.ISSUER_REFUSED, 422, { loc: ['body', 'issuer'], message: problem })
    const url = new URL(input.issuer)
    if (url.search)
      throw appError(IdpErrors.ISSUER_REFUSED, 422, {
        loc: ['body', 'issuer'],
        message: 'An issuer has no query',
      })
    return url.href.replace(/\/$/, '')
  }

  /** Scopes without which every sign-in would fail: refused at once rather than at the first sign-in. */
  function checkScopes(input: IdpModel.Create) {
    if (!input.scopes) return
    const loc = ['body', 'scopes']
    if (input.type === 'github') {
      if (!input.scopes.includes('user:email') && !input.scopes.includes('user'))
        throw appError(IdpErrors.SCOPES_GITHUB_EMAIL, 422, { loc })
    } else if (!input.scopes.includes('openid')) throw appError(IdpErrors.SCOPES_OPENID, 422, { loc })
  }

  return {
    async list(workspace: Workspace) {
      const rows = await core.db
        .select()
        .from(idps)
        .where(and(eq(idps.workspaceId, workspace.id), eq(idps.active, true)))
        .orderBy(desc(idps.createdAt), desc(idps.id))
      return { items: rows.map((i) => idpOut(core, i)), total: rows.length }
    },

    async create(
      workspace: Workspace,
      by: { actor: Actor; scopes: readonly string[] },
      input: IdpModel.Create,
    ) {
      if (workspace.state === 'deleting') throw appError(IdpErrors.WORKSPACE_DELETING, 409)
      const trustEmail = input.trust_email === true
      const trustMfa = input.trust_mfa === true
      // A trusted IdP signs in as whoever it names: the admins' call, not a developer's (DESIGN "IdPs").
      for (const [flag, on] of [
        ['trust_email', trustEmail],
        ['trust_mfa', trustMfa],
      ] as const)
        if (on && !holdsScope(by.scopes, 'workspace:admin'))
          throw forbidden(`Setting ${flag} needs the workspace:admin scope`)
      const issuer = checkedIssuer(input)
      checkScopes(input)
      const now = core.clock.now()
      const id = newId('idp', now)
      const created = await core.store.tx(async (tx) => {
        await tx.serialize(`idps:${workspace.id}`)
        const [{ n } = { n: 0 }] = await tx.db
          .select({ n: count() })
          .from(idps)
          .where(eq(idps.workspaceId, workspace.id))
        if (Number(n) >= MAX_IDPS) throw appError(IdpErrors.TOO_MANY_IDPS, 409)
        const [row] = await tx.db
          .insert(idps)
          .values({
            id,
            workspaceId: workspace.id,
            type: input.type,
            name: input.name === undefined ? DEFAULT_NAMES[input.type] : displayName(input.name),
            clientId: input.client_id.trim(),
            clientSecretSealed: core.secrets.seal(input.client_secret, clientSecretContext(id)),
            issuer,
            scopes: input.scopes ? [...input.scopes] : DEFAULT_IDP_SCOPES[input.type],
            active: true,
            trustEmail,
            trustMfa,
            createdAt: now,
          })
          .returning()
        await core.audit(
          {
            workspaceId: workspace.id,
            actor: by.actor,
            action: 'idp.created',
            target: { type: 'idp', id },
            changes: {
              type: { to: input.type },
              name: { to: row!.name },
              client_id: { to: row!.clientId },
              trust_email: { to: trustEmail },
              trust_mfa: { to: trustMfa },
            },
          },
          { tx },
        )
        return idpOut(core, row!)
      })
      // Every node's sign-in page shows it at once.
      await core.instances.changed(workspace.id)
      return created
    },

    /** Off the sign-in page, then gone; 200 also when it already was. */
    async remove(workspace: Workspace, by: Actor, idpId: string) {
      await core.store.tx(async (tx) => {
        const [off] = await tx.db
          .update(idps)
          .set({ active: false })
          .where(inWorkspace(workspace.id, idpId))
          .returning({ id: idps.id, name: idps.name })
        await tx.db.delete(idps).where(inWorkspace(workspace.id, idpId))
        if (!off) return
        await deleteIdpLinks(tx, workspace.id, idpId)
        await core.audit(
          {
            workspaceId: workspace.id,
            actor: by,
            action: 'idp.deleted',
            target: { type: 'idp', id: idpId },
            changes: { name: { from: off.name } },
          },
          { tx },
        )
      })
      await core.instances.changed(workspace.id)
    },
  }
}

/** The IdPs' teardown step of a workspace deletion. */
export async function deleteWorkspaceIdps(core: Core, workspaceId: string): Promise<void> {
  await core.db.delete(idps).where(eq(idps.workspaceId, workspaceId))
}

// Read by every instance a node loads (prepared.ts).
const activeIdpRows = preparedRead((db) =>
  db
    .select()
    .from(idps)
    .where(and(eq(idps.workspaceId, sql.placeholder('workspaceId')), eq(idps.active, true)))
    .orderBy(idps.createdAt, idps.id)
    .prepare('active_idps_of'),
)

/**
 * The identity plane's `externalIdps`: a workspace's active IdPs, the secret opened only when the
 * code exchange needs it.
 */
export const activeIdpsOf =
  (core: Core) =>
  async (workspaceId: string): Promise<ExternalIdp[]> => {
    const rows = await activeIdpRows(core.db).execute({ workspaceId })
    return rows.map((i) => ({
      id: i.id,
      type: i.type,
      name: i.name,
      clientId: i.clientId,
      clientSecret: () => core.secrets.open(i.clientSecretSealed, clientSecretContext(i.id)),
      issuer: i.issuer,
      scopes: i.scopes,
      trustEmail: i.trustEmail,
      trustMfa: i.trustMfa,
    }))
  }
