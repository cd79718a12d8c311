import { Value } from '@sinclair/typebox/value'
import { and, asc, count, eq, gt, inArray, or, type SQL, sql } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import { reaches, type TenantReach } from '../../access/scopes'
import { type AuditEntry, fieldChanges } from '../../audit/record'
import type { Core } from '../../core'
import type { Conn } from '../../db/store'
import { isoTime } from '../../shared/clock'
import { displayName } from '../../shared/display-names'
import { AppError, appError, type ErrorCode, type Loc } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { decodeCursor, likePrefix, nextCursor, pageLimit } from '../../shared/pagination'
import { valueErrorDetails } from '../../shared/plugins/errors'
import type { Workspace } from '../workspaces/service'
import { TenantErrors } from './errors'
import { METADATA_MAX_BYTES, TenantModel } from './model'
import { tenantInvitations, tenantMembers, tenants } from './schema'

export type Tenant = typeof tenants.$inferSelect

const tenantOut = (row: Tenant): TenantModel.Out => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  metadata: row.metadata,
  created_at: isoTime(row.createdAt),
  updated_at: isoTime(row.updatedAt),
})

/**
 * The body as its rules should see it: a name is stored trimmed, so it is trimmed before its
 * length is checked (routes run this ahead of validation; a batch on each item).
 */
export function trimName(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body
  const { name } = body as { name?: unknown }
  return typeof name === 'string' ? { ...body, name: name.trim() } : body
}

/** How deep metadata may nest: JSON.stringify recurses, and a stack overflow costs the node a second. */
const METADATA_MAX_DEPTH = 16

/**
 * Whether `value` nests deeper than METADATA_MAX_DEPTH, or holds more values than its byte budget
 * could: walked without recursion, before anything (JSON.stringify) recurses into it.
 */
function tooDeepOrLarge(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 0]]
  let seen = 0
  while (stack.length) {
    const [v, depth] = stack.pop()!
    if (++seen > METADATA_MAX_BYTES || depth > METADATA_MAX_DEPTH) return true
    if (v && typeof v === 'object') for (const child of Object.values(v)) stack.push([child, depth + 1])
  }
  return false
}

/** Metadata as stored: a JSON object of at most 4 KiB (UTF-8) nested at most 16 deep, else a 422 at `loc`. */
function checkedMetadata(metadata: unknown, loc: Loc): Record<string, unknown> {
  if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata))
    throw appError(TenantErrors.METADATA_NOT_OBJECT, 422, { loc })
  if (tooDeepOrLarge(metadata) || Buffer.byteLength(JSON.stringify(metadata)) > METADATA_MAX_BYTES)
    throw appError(TenantErrors.METADATA_TOO_LARGE, 422, { loc })
  return metadata as Record<string, unknown>
}

/** A valid TenantCreate's fields as stored; a 422 at `[...at, field]` for a rule beyond the model's. */
const createdFields = (input: TenantModel.Create, at: Loc) => ({
  slug: input.slug,
  name: displayName(input.name, [...at, 'name']),
  metadata: checkedMetadata(input.metadata ?? {}, [...at, 'metadata']),
})
type NewTenant = ReturnType<typeof createdFields>

/** One item of a batch, checked on its own: its fields, or the 422 detail it would have had alone. */
function batchItem(item: unknown, index: number): NewTenant | TenantModel.ItemError {
  // As on the single route: unknown fields are dropped, not refused.
  const input = Value.Clean(TenantModel.create, trimName(item))
  const at = ['body', index]
  if (!Value.Check(TenantModel.create, input)) {
    const [first] = valueErrorDetails(Value.Errors(TenantModel.create, input), at)
    return first!
  }
  try {
    return createdFields(input, at)
  } catch (e) {
    if (!(e instanceof AppError) || e.status !== 422) throw e
    return { type: e.code.toLowerCase(), msg: e.message, loc: e.loc }
  }
}

const slugTaken = (index: number, error: ErrorCode = TenantErrors.SLUG_TAKEN): TenantModel.ItemError => ({
  type: error.code.toLowerCase(),
  msg: error.message,
  loc: ['body', index, 'slug'],
})

/** SPEC "Events": `tenant.created` and `tenant.deleted` carry the tenant's id, slug and name. */
const eventData = (t: Tenant) => ({ tenant_id: t.id, slug: t.slug, name: t.name })

const inWorkspace = (workspaceId: string, tenantId: string) =>
  and(eq(tenants.workspaceId, workspaceId), eq(tenants.id, tenantId))

/** Held by every change to one tenant's existence or members, so none lands on a deleted tenant. */
export const tenantLock = (tx: Conn, tenantId: string) => tx.serialize(`tenant:${tenantId}`)

/**
 * Held while a user joins a tenant and while the user is deleted: a membership can then never be
 * added for a user whose deletion has already removed theirs.
 */
export const userLock = (tx: Conn, workspaceId: string, userId: string) =>
  tx.serialize(`tenant-user:${workspaceId}:${userId}`)

/**
 * The tenant `tenantId` of the workspace when `reach` includes it; 404 otherwise, the same for one
 * that does not exist and one the caller's tenant scopes do not cover.
 */
export async function reachableTenant(
  conn: Pick<Conn, 'db'>,
  workspaceId: string,
  reach: TenantReach,
  tenantId: string,
): Promise<Tenant> {
  const [row] = await conn.db.select().from(tenants).where(inWorkspace(workspaceId, tenantId)).limit(1)
  if (!row || !reaches(reach, row.slug)) throw appError(TenantErrors.TENANT_NOT_FOUND, 404)
  return row
}

/** What a list shows: the workspace's tenants within `reach`, those whose slug or name starts with `q`. */
function listed(workspaceId: string, reach: TenantReach, q: string | undefined): SQL {
  const filters: (SQL | undefined)[] = [eq(tenants.workspaceId, workspaceId)]
  if (reach !== 'all') filters.push(inArray(tenants.slug, [...reach]))
  const prefix = q?.trim()
  if (prefix) {
    const pattern = likePrefix(prefix)
    filters.push(
      or(
        sql`${tenants.slug} LIKE ${pattern} ESCAPE '\\'`,
        sql`lower(${tenants.name}) LIKE ${pattern} ESCAPE '\\'`,
      ),
    )
  }
  return and(...filters)!
}

/**
 * A workspace's tenants (DESIGN "Tenants"). Who may call is the guard's: `workspace:write` creates
 * and deletes; reading and editing take `workspace:read|write` or a tenant scope, and the guard's
 * `reach` (every tenant, or the slugs of those scopes) is applied here, as a 404 for any other
 * tenant. Creations and deletions are emitted (`tenant.created`, `tenant.deleted`) and every change
 * audited, in the change's transaction.
 */
export function createTenantService(core: Core) {
  /**
   * Inserts tenants in one statement; a slug the workspace already has is skipped (the unique
   * index decides, so two racing creations cannot both win). Emits and audits those inserted.
   */
  async function insertTenants(tx: Conn, workspace: Workspace, actor: Actor, list: NewTenant[]) {
    const now = core.clock.now()
    const rows = await tx.db
      .insert(tenants)
      .values(
        list.map((f) => ({
          id: newId('ten', now),
          workspaceId: workspace.id,
          ...f,
          createdAt: now,
          updatedAt: now,
        })),
      )
      .onConflictDoNothing({ target: [tenants.workspaceId, tenants.slug] })
      .returning()
    await core.emit.many(
      workspace.id,
      rows.map((t) => ({ type: 'tenant.created' as const, data: eventData(t), tenantId: t.id })),
      { tx },
    )
    await core.audit.many(
      rows.map(
        (t): AuditEntry => ({
          workspaceId: workspace.id,
          actor,
          action: 'tenant.created',
          target: { type: 'tenant', id: t.id },
          changes: { slug: { to: t.slug }, name: { to: t.name }, metadata: { to: t.metadata } },
        }),
      ),
      { tx },
    )
    return rows
  }

  const open = (workspace: Workspace) => {
    if (workspace.state === 'deleting') throw appError(TenantErrors.WORKSPACE_DELETING, 409)
  }

  return {
    /** A page of the tenants within `reach`, in creation order; `q` is a slug or name prefix. */
    async list(
      workspace: Workspace,
      reach: TenantReach,
      query: { limit?: number; cursor?: string; q?: string },
    ) {
      const limit = pageLimit(query.limit)
      const where = listed(workspace.id, reach, query.q)
      const [counted] = await core.db.select({ n: count() }).from(tenants).where(where)
      const after = query.cursor ? gt(tenants.id, decodeCursor(query.cursor)) : undefined
      const rows = await core.db
        .select()
        .from(tenants)
        .where(and(where, after))
        .orderBy(asc(tenants.id))
        .limit(limit + 1)
      return {
        items: rows.slice(0, limit).map(tenantOut),
        total: Number(counted?.n ?? 0),
        next_cursor: nextCursor(rows, limit, (t) => t.id),
      }
    },

    async get(workspace: Workspace, reach: TenantReach, tenantId: string): Promise<TenantModel.Out> {
      return tenantOut(await reachableTenant(core, workspace.id, reach, tenantId))
    },

    /** Creates a tenant (`tenant.created`); 409 at `slug` when the workspace has one with it. */
    async create(workspace: Workspace, actor: Actor, input: TenantModel.Create): Promise<TenantModel.Out> {
      open(workspace)
      const fields = createdFields(input, ['body'])
      return core.store.tx(async (tx) => {
        const [row] = await insertTenants(tx, workspace, actor, [fields])
        if (!row) throw appError(TenantErrors.SLUG_TAKEN, 409, { loc: ['body', 'slug'] })
        return tenantOut(row)
      })
    },

    /**
     * `tenants:batch`: each item is checked and created on its own, and one that fails (its rules,
     * a slug the workspace has, or one an earlier item has) is reported without stopping the rest.
     * The valid items go in one transaction: one multi-row insert, then their events and audit
     * entries, each one statement.
     */
    async createMany(workspace: Workspace, actor: Actor, items: unknown[]): Promise<TenantModel.BatchResult> {
      open(workspace)
      const results: TenantModel.BatchResult['results'] = []
      const valid = new Map<string, { index: number; fields: NewTenant }>()
      items.forEach((item, index) => {
        const checked = batchItem(item, index)
        if ('type' in checked) results[index] = { index, status: 'error', error: checked }
        else if (valid.has(checked.slug))
          results[index] = { index, status: 'error', error: slugTaken(index, TenantErrors.SLUG_REPEATED) }
        else valid.set(checked.slug, { index, fields: checked })
      })
      if (valid.size) {
        const fields = [...valid.values()].map((v) => v.fields)
        const rows = await core.store.tx((tx) => insertTenants(tx, workspace, actor, fields))
        const bySlug = new Map(rows.map((row) => [row.slug, row]))
        for (const [slug, { index }] of valid) {
          const row = bySlug.get(slug)
          results[index] = row
            ? { index, status: 'created', tenant: tenantOut(row) }
            : { index, status: 'error', error: slugTaken(index) }
        }
      }
      const created = results.filter((r) => r.status === 'created').length
      return { results, created, failed: results.length - created }
    },

    /**
     * Changes a tenant's name or metadata (`tenant.updated`); its slug never changes (scopes and
     * ID tokens name it). 404 for a tenant outside `reach`.
     */
    async update(
      workspace: Workspace,
      actor: Actor,
      reach: TenantReach,
      tenantId: string,
      input: TenantModel.Update,
    ): Promise<TenantModel.Out> {
      const name = input.name === undefined ? undefined : displayName(input.name)
      const metadata =
        input.metadata === undefined ? undefined : checkedMetadata(input.metadata ?? {}, ['body', 'metadata'])
      return core.store.tx(async (tx) => {
        const before = await reachableTenant(tx, workspace.id, reach, tenantId)
        const after = { name: name ?? before.name, metadata: metadata ?? before.metadata }
        const changes = fieldChanges(before, after, ['name', 'metadata'])
        if (!Object.keys(changes).length) return tenantOut(before)
        const [row] = await tx.db
          .update(tenants)
          .set({ ...after, updatedAt: core.clock.now() })
          .where(inWorkspace(workspace.id, before.id))
          .returning()
        // Deleted meanwhile (its row is gone since it was read): as if it never was.
        if (!row) throw appError(TenantErrors.TENANT_NOT_FOUND, 404)
        await core.audit(
          {
            workspaceId: workspace.id,
            actor,
            action: 'tenant.updated',
            target: { type: 'tenant', id: before.id },
            changes,
          },
          { tx },
        )
        return tenantOut(row)
      })
    },

    /** Deletes a tenant, its memberships and invitations (`tenant.deleted`); idempotent. */
    async remove(workspace: Workspace, actor: Actor, tenantId: string): Promise<void> {
      await core.store.tx(async (tx) => {
        await tenantLock(tx, tenantId)
        const [gone] = await tx.db.delete(tenants).where(inWorkspace(workspace.id, tenantId)).returning()
        if (!gone) return
        await tx.db.delete(tenantMembers).where(eq(tenantMembers.tenantId, gone.id))
        await tx.db.delete(tenantInvitations).where(eq(tenantInvitations.tenantId, gone.id))
        await core.emit('tenant.deleted', workspace.id, eventData(gone), { tx, tenantId: gone.id })
        await core.audit(
          {
            workspaceId: workspace.id,
            actor,
            action: 'tenant.deleted',
            target: { type: 'tenant', id: gone.id },
            changes: { slug: { from: gone.slug }, name: { from: gone.name } },
          },
          { tx },
        )
      })
    },
  }
}

/** Tenants' share of a workspace teardown: its tenants, their memberships and invitations. */
export async function deleteWorkspaceTenants(core: Pick<Core, 'db'>, workspaceId: string): Promise<void> {
  await core.db.delete(tenantInvitations).where(eq(tenantInvitations.workspaceId, workspaceId))
  await core.db.delete(tenantMembers).where(eq(tenantMembers.workspaceId, workspaceId))
  await core.db.delete(tenants).where(eq(tenants.workspaceId, workspaceId))
}

/** The slugs of the tenants a user of `instanceId` belongs to (the `tenants` claim), in order. */
export const tenantsOf =
  (core: Core) =>
  async (instanceId: string, accountId: string): Promise<string[]> => {
    const rows = await core.db
      .select({ slug: tenants.slug })
      .from(tenantMembers)
      .innerJoin(tenants, eq(tenants.id, tenantMembers.tenantId))
      .where(and(eq(tenantMembers.workspaceId, instanceId), eq(tenantMembers.userId, accountId)))
      .orderBy(asc(tenants.slug))
    return rows.map((r) => r.slug)
  }

/**
 * A deleted user's memberships, removed in the deletion's transaction (the users feature hands
 * this to the identity plane's `deleteAccount`).
 */
export async function removeUserFromTenants(tx: Conn, workspaceId: string, userId: string): Promise<void> {
  await userLock(tx, workspaceId, userId)
  await tx.db
    .delete(tenantMembers)
    .where(and(eq(tenantMembers.workspaceId, workspaceId), eq(tenantMembers.userId, userId)))
}
