import { describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { testCore } from '../../../tests/support/core'
import { instanceKeys } from '../../identity/schema'
import {
  PROVISION_STEPS,
  type ProvisionStep,
  provisionWorkspace,
  type TeardownStep,
  teardownWorkspace,
} from './provisioning'
import { workspaces } from './schema'
import { createWorkspaceService } from './service'

const setup = () => {
  const core = testCore()
  const service = createWorkspaceService(core)
  const w = service.create('usr_owner', 'Acme')
  const row = () => core.db.select().from(workspaces).where(eq(workspaces.id, w.id)).get()!
  return { core, w, row }
}

describe('provisionWorkspace', () => {
  it('creates the signing keys and makes the workspace active', async () => {
    const { core, w, row } = setup()
    await provisionWorkspace(core, w.id, { lastAttempt: false })
    expect(row()).toMatchObject({ state: 'active', provisioningError: null, provisioningStep: null })
    const algs = core.db
      .select()
      .from(instanceKeys)
      .where(eq(instanceKeys.instanceId, w.id))
      .all()
      .map((k) => k.alg)
    expect(algs.sort()).toEqual(['ES256', 'RS256'])
  })

  it('is idempotent: running again changes nothing and adds no keys', async () => {
    const { core, w, row } = setup()
    await provisionWorkspace(core, w.id, { lastAttempt: false })
    const before = row()
    await provisionWorkspace(core, w.id, { lastAttempt: false })
    expect(row()).toEqual(before)
    expect(core.db.select().from(instanceKeys).where(eq(instanceKeys.instanceId, w.id)).all()).toHaveLength(2)
  })

  it('resumes after the last recorded step (a kill mid-way re-runs only what is left)', async () => {
    const { core, w, row } = setup()
    const ran: string[] = []
    const steps: ProvisionStep[] = ['a', 'b', 'c'].map((name) => ({
      name,
      does: name,
      run: () => void ran.push(name),
    }))
    core.db.update(workspaces).set({ provisioningStep: 'a' }).where(eq(workspaces.id, w.id)).run()
    await provisionWorkspace(core, w.id, { lastAttempt: false, steps })
    expect(ran).toEqual(['b', 'c'])
    expect(row().state).toBe('active')
  })

  it('lets the job retry before the last attempt, then fails with a readable reason', async () => {
    const { core, w, row } = setup()
    const steps: ProvisionStep[] = [
      { name: 'ok', does: 'do the first thing', run: () => {} },
      {
        name: 'boom',
        does: 'create the signing keys',
        run: () => {
          throw new Error('EIO: disk on fire')
        },
      },
    ]
    await expect(provisionWorkspace(core, w.id, { lastAttempt: false, steps })).rejects.toThrow(
      'disk on fire',
    )
    expect(row()).toMatchObject({ state: 'provisioning', provisioningStep: 'ok' })
    await provisionWorkspace(core, w.id, { lastAttempt: true, steps })
    expect(row().state).toBe('provisioning_failed')
    expect(row().provisioningError).toStartWith('Could not create the signing keys.')
    expect(row().provisioningError).not.toContain('EIO')
  })

  it('leaves a workspace that is being deleted alone', async () => {
    const { core, w, row } = setup()
    core.db.update(workspaces).set({ state: 'deleting' }).where(eq(workspaces.id, w.id)).run()
    await provisionWorkspace(core, w.id, { lastAttempt: false, steps: PROVISION_STEPS })
    expect(row().state).toBe('deleting')
  })
})

describe('teardownWorkspace', () => {
  it("runs every owner's step, then deletes the workspace row", async () => {
    const { core, w } = setup()
    core.db.update(workspaces).set({ state: 'deleting' }).where(eq(workspaces.id, w.id)).run()
    const ran: string[] = []
    const rowLeft = () => core.db.select().from(workspaces).where(eq(workspaces.id, w.id)).get() !== undefined
    const steps: TeardownStep[] = ['apps', 'events'].map((owner) => (_core, id) => {
      expect(rowLeft()).toBe(true)
      ran.push(`${owner} ${id}`)
    })
    await teardownWorkspace(core, w.id, steps)
    expect(ran).toEqual([`apps ${w.id}`, `events ${w.id}`])
    expect(rowLeft()).toBe(false)
  })

  it('keeps the workspace deleting when a step fails, so the retry runs the steps again', async () => {
    const { core, w, row } = setup()
    core.db.update(workspaces).set({ state: 'deleting' }).where(eq(workspaces.id, w.id)).run()
    let fail = true
    const steps: TeardownStep[] = [
      () => {
        if (fail) throw new Error('EBUSY')
      },
    ]
    await expect(teardownWorkspace(core, w.id, steps)).rejects.toThrow('EBUSY')
    expect(row().state).toBe('deleting')
    fail = false
    await teardownWorkspace(core, w.id, steps)
    expect(core.db.select().from(workspaces).where(eq(workspaces.id, w.id)).get()).toBeUndefined()
  })

  it('leaves a workspace that is not being deleted alone', async () => {
    const { core, w, row } = setup()
    const ran: string[] = []
    await teardownWorkspace(core, w.id, [() => void ran.push('step')])
    expect(ran).toEqual([])
    expect(row().state).toBe('provisioning')
  })
})
