import { and, count, desc, eq, gt, isNull, or } from 'drizzle-orm'
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose'
import type { Actor, Principal } from '../../access/model'
import { grantsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { deleteInBatches } from '../../db/batch-delete'
import type { Conn } from '../../db/store'
import { isoTime } from '../../shared/clock'
import { displayName } from '../../shared/display-names'
import { appError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Workspace } from '../workspaces/service'
import { MachineKeyErrors } from './errors'
import { REVOKE_ROTATED_KEY } from './jobs'
import type { MachineKeyModel } from './model'
import { machineKeyAssertions, machineKeys } from './schema'

export type MachineKey = typeof machineKeys.$inferSelect

/** SPEC "Other constants": an old key works this long after a rotation. */
const ROTATION_GRACE_MS = 24 * 3_600_000
/** A revoked key's row stays this long, so the exchange can say why it is refused; then it is purged. */
const REVOKED_KEPT_MS = 30 * 24 * 3_600_000
/** Keys that work, per workspace: more is a leak waiting to happen, not automation. */
const MAX_KEYS = 100

/** Who acts, as the guard hands it to a route: the scopes bound what a key may be given. */
export interface KeyCaller {
  principal: Principal
  actor: Actor
  /** What the caller holds on the workspace. */
  scopes: readonly string[]
}

/** The key's state at `now`; a key past its rotation's 24 hours counts as revoked. */
export function keyStatus(k: MachineKey, now: number): MachineKeyModel.Out['status'] | 'revoked' {
  if (k.revokedAt !== null || (k.revokesAt !== null && k.revokesAt <= now)) return 'revoked'
  if (k.expiresAt !== null && k.expiresAt <= now) return 'expired'
  return k.revokesAt !== null ? 'rotating' : 'active'
}

const keyOut = (k: MachineKey, now: number): MachineKeyModel.Out => {
  const status = keyStatus(k, now)
  return {
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    expires_at: k.expiresAt === null ? null : isoTime(k.expiresAt),
    created_at: isoTime(k.createdAt),
    last_used_at: k.lastUsedAt === null ? null : isoTime(k.lastUsedAt),
    // A revoked key is never listed; this keeps the type closed.
    status: status === 'revoked' ? 'expired' : status,
    revokes_at: k.revokesAt === null ? null : isoTime(k.revokesAt),
  }
}

/** Where a key's assertions are exchanged (the key file's `token_url`, the assertion's `aud`). */
export const tokenUrl = (core: Pick<Core, 'config'>) => `${core.config.baseUrl}/v1/auth/token`

const inWorkspace = (workspaceId: string, keyId: string) =>
  and(eq(machineKeys.workspaceId, workspaceId), eq(machineKeys.id, keyId))

/** Not revoked, and not past a rotation's grace: the keys a workspace lists and counts. */
const notRevoked = (now: number) =>
  and(isNull(machineKeys.revokedAt), or(isNull(machineKeys.revokesAt), gt(machineKeys.revokesAt, now)))

/**
 * A workspace's machine keys (DESIGN "Machine keys"). Who may call is the guard's (`workspace:read`
 * to list, `workspace:admin` to create, rotate and delete); what a new key may hold is decided here:
 * never a scope its creator lacks. Every change is audited in its transaction, never emitted (SPEC
 * "Events": key changes are control-plane events, in the audit log only).
 */
export function createMachineKeyService(core: Core) {
  /** A new key pair: the row keeps the public half, the key file carries the private half. */
  async function keyPair() {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
    return { publicJwk: JSON.stringify(await exportJWK(publicKey)), secret: await exportPKCS8(privateKey) }
  }

  async function insertKey(
    tx: Conn,
    workspace: Workspace,
    by: KeyCaller,
    pair: { publicJwk: string; secret: string },
    fields: { name: string; scopes: string[]; expiresAt: number | null },
  ) {
    const now = core.clock.now()
    const [row] = await tx.db
      .insert(machineKeys)
      .values({
        id: newId('mk', now),
        workspaceId: workspace.id,
        ...fields,
        publicJwk: pair.publicJwk,
        createdAt: now,
        createdBy: by.actor.id,
      })
      .returning()
    if (!row) throw new Error('the machine key was not stored')
    return { row, secret: pair.secret }
  }

  const created = (row: MachineKey, secret: string) => ({
    ...keyOut(row, core.clock.now()),
    key: {
      type: 'service_account' as const,
      key_id: row.id,
      key_secret: secret,
      workspace_id: row.workspaceId,
      token_url: tokenUrl(core),
    },
  })

  /**
   * When a calling key stops working (its expiry, or its rotation's end), or null for a person or a
   * key without an end. A key whose own key was revoked, rotated out or expired may not make
   * credentials with the token it still holds (403): its token stays valid for reads and
   * ordinary writes until its 15 minutes end (SPEC), but never mints what would outlive it.
   */
  async function callerKeyEnd(by: KeyCaller): Promise<number | null> {
    if (by.principal.kind !== 'key') return null
    const own = await keyRow(core.store, by.principal.key.id)
    if (!own || keyStatus(own, core.clock.now()) !== 'active')
      throw appError(MachineKeyErrors.CALLER_NOT_ACTIVE, 403)
    return own.expiresAt
  }

  /** Serialises changes to one workspace's keys across nodes (the key count, a rotation's check). */
  const keysLock = (tx: Conn, workspaceId: string) => tx.serialize(`machine-keys:${workspaceId}`)

  return {
    /** The keys that work (active, rotating) and the expired ones, newest first; never a secret. */
    async list(workspace: Workspace): Promise<MachineKeyModel.Out[]> {
      const now = core.clock.now()
      const rows = await core.db
        .select()
        .from(machineKeys)
        .where(and(eq(machineKeys.workspaceId, workspace.id), notRevoked(now)))
        .orderBy(desc(machineKeys.createdAt), desc(machineKeys.id))
      return rows.map((k) => keyOut(k, now))
    },

    /** One key as listed; 404 for a revoked one or one of another workspace. */
    async get(workspace: Workspace, keyId: string): Promise<MachineKeyModel.Out> {
      const now = core.clock.now()
      const [row] = await core.db.select().from(machineKeys).where(inWorkspace(workspace.id, keyId)).limit(1)
      if (!row || keyStatus(row, now) === 'revoked') throw appError(MachineKeyErrors.KEY_NOT_FOUND, 404)
      return keyOut(row, now)
    },

    /**
     * Creates a key (`machine_key.created`): 201 with the key file, shown this once. The scopes must
     * each be held by the caller (a key cannot mint a stronger key); the expiry, if any, is future.
     */
    async create(workspace: Workspace, by: KeyCaller, input: MachineKeyModel.Create) {
      if (workspace.state === 'deleting') throw appError(MachineKeyErrors.WORKSPACE_DELETING, 409)
      const name = displayName(input.name)
      const scopes = [...new Set(input.scopes)]
      scopes.forEach((scope, i) => {
        if (!grantsScope(by.scopes, scope))
          throw appError(MachineKeyErrors.SCOPE_NOT_HELD, 422, {
            loc: ['body', 'scopes', i],
            message: `You do not hold ${scope}, so a key of yours cannot have it`,
          })
      })
      const expiresAt = input.expires_at ? Date.parse(input.expires_at) : null
      if (expiresAt !== null && !(expiresAt > core.clock.now()))
        throw appError(MachineKeyErrors.EXPIRES_IN_PAST, 422, { loc: ['body', 'expires_at'] })
      const end = await callerKeyEnd(by)
      if (end !== null && (expiresAt === null || expiresAt > end))
        throw appError(MachineKeyErrors.EXPIRES_IN_PAST, 422, {
          loc: ['body', 'expires_at'],
          message: `A key created by a key must expire by ${isoTime(end)}, when its creator does`,
        })
      const pair = await keyPair()
      return core.store.tx(async (tx) => {
        await keysLock(tx, workspace.id)
        const [{ n } = { n: 0 }] = await tx.db
          .select({ n: count() })
          .from(machineKeys)
          .where(and(eq(machineKeys.workspaceId, workspace.id), notRevoked(core.clock.now())))
        if (Number(n) >= MAX_KEYS) throw appError(MachineKeyErrors.TOO_MANY_KEYS, 409)
        const { row, secret } = await insertKey(tx, workspace, by, pair, { name, scopes, expiresAt })
        await core.audit(
          {
            workspaceId: workspace.id,
            actor: by.actor,
            action: 'machine_key.created',
            target: { type: 'machine_key', id: row.id },
            changes: {
              name: { to: row.name },
              scopes: { to: row.scopes },
              expires_at: { to: row.expiresAt === null ? null : isoTime(row.expiresAt) },
            },
          },
          { tx },
        )
        return created(row, secret)
      })
    },

    /**
     * Rotates a key (`machine_key.rotated`): a new key with the same name, scopes and expiry, shown
     * once; the old one works 24 hours more, then a durable job revokes it (the exchange refuses it
     * from that moment on even if the job is late). A key rotated already, or expired, is refused (409).
     */
    async rotate(workspace: Workspace, by: KeyCaller, keyId: string) {
      const now = core.clock.now()
      const pair = await keyPair()
      return core.store.tx(async (tx) => {
        await keysLock(tx, workspace.id)
        const [old] = await tx.db.select().from(machineKeys).where(inWorkspace(workspace.id, keyId)).limit(1)
        const status = old ? keyStatus(old, now) : 'revoked'
        if (!old || status === 'revoked') throw appError(MachineKeyErrors.KEY_NOT_FOUND, 404)
        if (status === 'rotating') throw appError(MachineKeyErrors.ALREADY_ROTATING, 409)
        if (status === 'expired') throw appError(MachineKeyErrors.KEY_EXPIRED, 409)
        // A key rotating a key gets its key file: the new key may not outlive the caller either.
        const end = await callerKeyEnd(by)
        if (end !== null && (old.expiresAt === null || old.expiresAt > end))
          throw appError(MachineKeyErrors.OUTLIVES_CALLER, 403)
        // Not counted against the limit: the old key goes within the day.
        const revokesAt = now + ROTATION_GRACE_MS
        const { row, secret } = await insertKey(tx, workspace, by, pair, {
          name: old.name,
          scopes: old.scopes,
          expiresAt: old.expiresAt,
        })
        await tx.db
          .update(machineKeys)
          .set({ revokesAt, replacedBy: row.id })
          .where(inWorkspace(workspace.id, old.id))
        await core.jobs.enqueue(
          REVOKE_ROTATED_KEY,
          { keyId: old.id },
          { tx, runAt: revokesAt, workspaceId: workspace.id },
        )
        await core.audit(
          {
            workspaceId: workspace.id,
            actor: by.actor,
            action: 'machine_key.rotated',
            target: { type: 'machine_key', id: old.id },
            changes: { replaced_by: { to: row.id }, revokes_at: { to: isoTime(revokesAt) } },
          },
          { tx },
        )
        return created(row, secret)
      })
    },

    /**
     * Revokes a key at once (`machine_key.revoked`); idempotent. Access tokens it issued keep
     * working until their own 15 minutes end (SPEC "Machine key").
     */
    async revoke(workspace: Workspace, by: KeyCaller, keyId: string): Promise<void> {
      const now = core.clock.now()
      await core.store.tx(async (tx) => {
        const [gone] = await tx.db
          .update(machineKeys)
          .set({ revokedAt: now, revokedReason: 'deleted' })
          .where(and(inWorkspace(workspace.id, keyId), notRevoked(now)))
          .returning()
        if (!gone) return
        await core.audit(
          {
            workspaceId: workspace.id,
            actor: by.actor,
            action: 'machine_key.revoked',
            target: { type: 'machine_key', id: gone.id },
            changes: { name: { from: gone.name }, scopes: { from: gone.scopes } },
          },
          { tx },
        )
      })
    },
  }
}

// The exchange's lookup, on its hot path: raw SQL (drizzle builds its statement anew each call).
const KEY_BY_ID = `
  SELECT id, workspace_id AS "workspaceId", name, scopes, public_jwk AS "publicJwk", expires_at AS "expiresAt",
    created_at AS "createdAt", created_by AS "createdBy", last_used_at AS "lastUsedAt", revokes_at AS "revokesAt",
    replaced_by AS "replacedBy", revoked_at AS "revokedAt", revoked_reason AS "revokedReason"
  FROM machine_keys WHERE id = $1`

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))

/** One key by id, whatever its workspace or state (the exchange's lookup, and a calling key's own). */
export async function keyRow(conn: Conn, keyId: string): Promise<MachineKey | undefined> {
  const [row] = await conn.query<Record<string, unknown>>(KEY_BY_ID, [keyId])
  if (!row) return undefined
  return {
    ...(row as unknown as MachineKey),
    scopes: JSON.parse(String(row.scopes)) as string[],
    expiresAt: num(row.expiresAt),
    createdAt: Number(row.createdAt),
    lastUsedAt: num(row.lastUsedAt),
    revokesAt: num(row.revokesAt),
    revokedAt: num(row.revokedAt),
  }
}

/** Machine keys' share of a workspace teardown. */
export async function deleteWorkspaceMachineKeys(core: Pick<Core, 'db'>, workspaceId: string): Promise<void> {
  await core.db.delete(machineKeyAssertions).where(eq(machineKeyAssertions.workspaceId, workspaceId))
  await core.db.delete(machineKeys).where(eq(machineKeys.workspaceId, workspaceId))
}

/** Spent assertion ids past their `exp`, and revoked keys kept long enough to explain a refusal. */
export async function purgeMachineKeyRows(core: Core): Promise<Record<string, number>> {
  const now = core.clock.now()
  return {
    machine_key_assertions: await deleteInBatches(core.store, 'machine_key_assertions', 'expires_at <= $1', [
      now,
    ]),
    machine_keys: await deleteInBatches(core.store, 'machine_keys', 'revoked_at <= $1', [
      now - REVOKED_KEPT_MS,
    ]),
  }
}
