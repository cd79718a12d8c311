import { describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { TEST_ACTOR, testCore } from '../../../tests/support/core'
import { instanceKeys } from '../../identity/schema'
import { workspaceLifecycle } from '..'
import type { ProvisionStep, TeardownStep } from '../feature'
import { provisionWorkspace, teardownWorkspace } from './provisioning'
import { workspaces } from './schema'
import { createWorkspaceService } from './service'

/** The product's steps, every feature's. */
const PROVISION_STEPS = workspaceLifecycle().provision

const setup = async () => {
  const core = await testCore()
  const service = createWorkspaceService(core)
  const w = await service.create('usr_owner', TEST_ACTOR, 'Acme')
  const find = async () => (await core.db.select().from(workspaces).where(eq(workspaces.id, w.id)))[0]
  const row = async () => (await find())!
  const setRow = async (set: Partial<typeof workspaces.$inferInsert>) => {
    await core.db.update(workspaces).set(set).where(eq(workspaces.id, w.id))
  }
  const keysOf = () => core.db.select().from(instanceKeys).where(eq(instanceKeys.instanceId, w.id))
  return { core, w, find, row, setRow, keysOf }
}

describe('provisionWorkspace', () => {
  it('creates the signing keys and makes the workspace active', async () => {
    const { core, w, row, keysOf } = await setup()
    await provisionWorkspace(core, w.id, { lastAttempt: false, steps: PROVISION_STEPS })
    expect(await row()).toMatchObject({ state: 'active', provisioningError: null, provisioningStep: null })
    const algs = (await keysOf()).map((k) => k.alg)
    expect(algs.sort()).toEqual(['ES256', 'RS256'])
  })

  it('is idempotent: running again changes nothing and adds no keys', async () => {
    const { core, w, row, keysOf } = await setup()
    await provisionWorkspace(core, w.id, { lastAttempt: false, steps: PROVISION_STEPS })
    const before = await row()
    await provisionWorkspace(core, w.id, { lastAttempt: false, steps: PROVISION_STEPS })
    expect(await row()).toEqual(before)
    expect(await keysOf()).toHaveLength(2)
  })

  it('resumes after the last recorded step (a kill mid-way re-runs only what is left)', async () => {
    const { core, w, row, setRow } = await setup()
    const ran: string[] = []
    const steps: ProvisionStep[] = ['a', 'b', 'c'].map((name) => ({
      name,
      does: name,
      run: () => void ran.push(name),
    }))
    await setRow({ provisioningStep: 'a' })
    await provisionWorkspace(core, w.id, { lastAttempt: false, steps })
    expect(ran).toEqual(['b', 'c'])
    expect((await row()).state).toBe('active')
  })

  it('lets the job retry before the last attempt, then fails with a readable reason', async () => {
    const { core, w, row } = await setup()
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
    expect(await row()).toMatchObject({ state: 'provisioning', provisioningStep: 'ok' })
    await provisionWorkspace(core, w.id, { lastAttempt: true, steps })
    const failed = await row()
    expect(failed.state).toBe('provisioning_failed')
    expect(failed.provisioningError).toStartWith('Could not create the signing keys.')
    expect(failed.provisioningError).not.toContain('EIO')
  })

  it('leaves a workspace that is being deleted alone', async () => {
    const { core, w, row, setRow } = await setup()
    await setRow({ state: 'deleting' })
    await provisionWorkspace(core, w.id, { lastAttempt: false, steps: PROVISION_STEPS })
    expect((await row()).state).toBe('deleting')
  })
})

describe('teardownWorkspace', () => {
  it("runs every owner's step, then deletes the workspace row", async () => {
    const { core, w, find, setRow } = await setup()
    await setRow({ state: 'deleting' })
    const ran: string[] = []
    const steps: TeardownStep[] = ['apps', 'events'].map((owner) => async (_core, id) => {
      expect(await find()).toBeDefined()
      ran.push(`${owner} ${id}`)
    })
    await teardownWorkspace(core, w.id, steps)
    expect(ran).toEqual([`apps ${w.id}`, `events ${w.id}`])
    expect(await find()).toBeUndefined()
  })

  it('keeps the workspace deleting when a step fails, so the retry runs the steps again', async () => {
    const { core, w, row, find, setRow } = await setup()
    await setRow({ state: 'deleting' })
    let fail = true
    const steps: TeardownStep[] = [
      async () => {
        if (fail) throw new Error('EBUSY')
      },
    ]
    await expect(teardownWorkspace(core, w.id, steps)).rejects.toThrow('EBUSY')
    expect((await row()).state).toBe('deleting')
    fail = false
    await teardownWorkspace(core, w.id, steps)
    expect(await find()).toBeUndefined()
  })

  it('leaves a workspace that is not being deleted alone', async () => {
    const { core, w, row } = await setup()
    const ran: string[] = []
    await teardownWorkspace(core, w.id, [async () => void ran.push('step')])
    expect(ran).toEqual([])
    expect((await row()).state).toBe('provisioning')
  })
})
