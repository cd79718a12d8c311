import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestCore, testCore } from '../../../tests/support/core'
import { servingStates } from './instance-states'
import { ensureInstanceKeys, loadInstance } from './keys'

// Issue 27: a cold instance's state comes with its keys, one read. What it serves under is kept
// beside its keys by the database (migration `instance_serving`), from its workspace's row, on every
// write of either row, whoever makes it: here raw SQL, as an operator or `store copy` would write.
let core: TestCore

beforeAll(async () => {
  core = await testCore()
})
afterAll(() => core.store.close())

const id = (n: number) => `5e5e5e5e-0000-4000-8000-${n.toString(16).padStart(12, '0')}`

async function insertWorkspace(workspaceId: string, state: string, plan = 'free', rps: number | null = null) {
  await core.store.exec(
    `INSERT INTO workspaces (id, name, owner_id, state, plan, data_plane_rps, created_at, updated_at)
     VALUES ($1, 'Serving', 'usr_x', $2, $3, $4, 0, 0)`,
    [workspaceId, state, plan, rps],
  )
}

const setWorkspace = (workspaceId: string, column: 'state' | 'plan' | 'data_plane_rps', value: unknown) =>
  core.store.exec(`UPDATE workspaces SET ${column} = $2 WHERE id = $1`, [workspaceId, value])

/** What the plane reads of the instance, both ways it does: with its keys (cold), alone (a memo renewed). */
async function served(instanceId: string) {
  const [alone] = await servingStates(core)([instanceId])
  const { state, keys } = await loadInstance(core, instanceId)
  expect(state).toEqual(alone as never)
  return { ...state, keys: keys?.keys.length ?? 0 }
}

describe('what an instance serves under', () => {
  it("follows its workspace's state, plan and rate through every write", async () => {
    const ws = id(1)
    await insertWorkspace(ws, 'provisioning')
    await ensureInstanceKeys(core, ws)
    expect(await served(ws)).toEqual({ active: false, dataPlaneRps: null, keys: 2 })
    await setWorkspace(ws, 'state', 'active')
    expect(await served(ws)).toEqual({ active: true, dataPlaneRps: null, keys: 2 })
    // A rate set on Free is not applied; on a paid plan it is, and back on Free it is not.
    await setWorkspace(ws, 'data_plane_rps', 500)
    expect(await served(ws)).toEqual({ active: true, dataPlaneRps: null, keys: 2 })
    await setWorkspace(ws, 'plan', 'pro')
    expect(await served(ws)).toEqual({ active: true, dataPlaneRps: 500, keys: 2 })
    await setWorkspace(ws, 'plan', 'free')
    expect(await served(ws)).toEqual({ active: true, dataPlaneRps: null, keys: 2 })
    await setWorkspace(ws, 'state', 'deleting')
    expect(await served(ws)).toEqual({ active: false, dataPlaneRps: null, keys: 2 })
  })

  it('is right when its workspace changes while its keys are written, on another connection', async () => {
    // The keys' transaction reads the workspace's state as it inserts; a suspension committed
    // before it commits must not be lost (on PostgreSQL the suspension's own trigger cannot see
    // the uncommitted row, so the insert's read must hold the workspace's row until it commits).
    const ws = id(20)
    await insertWorkspace(ws, 'active', 'pro', 300)
    let suspended: Promise<number> | undefined
    await core.store.tx(async (tx) => {
      await tx.exec(
        `INSERT INTO instance_secrets (instance_id, cookie_keys_sealed, created_at) VALUES ($1, 'sealed', 0)`,
        [ws],
      )
      suspended = setWorkspace(ws, 'state', 'suspended')
      await Bun.sleep(200)
    })
    await suspended
    const [state] = await servingStates(core)([ws])
    expect(state).toEqual({ active: false, dataPlaneRps: 300 })
  })

  it('is right whichever row is written first (keys for an active workspace, a copy in any order)', async () => {
    const keysAfter = id(2)
    await insertWorkspace(keysAfter, 'active', 'pro', 300)
    await ensureInstanceKeys(core, keysAfter)
    expect(await served(keysAfter)).toEqual({ active: true, dataPlaneRps: 300, keys: 2 })
    const keysFirst = id(3)
    await ensureInstanceKeys(core, keysFirst)
    expect(await served(keysFirst)).toEqual({ active: false, dataPlaneRps: null, keys: 2 })
    await insertWorkspace(keysFirst, 'active')
    expect(await served(keysFirst)).toEqual({ active: true, dataPlaneRps: null, keys: 2 })
  })

  it('is not serving for an instance without a workspace or without keys', async () => {
    const noKeys = id(4)
    await insertWorkspace(noKeys, 'active')
    expect(await served(noKeys)).toEqual({ active: false, dataPlaneRps: null, keys: 0 })
    expect(await served(id(5))).toEqual({ active: false, dataPlaneRps: null, keys: 0 })
  })
})
