// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import type { Core } from '../../core'
import { createDataPlaneLimit } from '../../limits/data-plane'
import { createLimiter } from '../../limits/limiter'
import type { WorkspaceState } from '../deps'
import { MEMO_MS, REFRESH_AHEAD_MS } from '../instances'
import { DEFAULT_LOGIN_POLICY } from '../login-policy'
import { type Instance, InstancePool, type StateReads } from './pool'

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`
/** The one client of the limiter's requests here. */
const CLIENT = { ip: () => '192.0.2.1' }

/** A pool whose clock stands still and which loads no instance, with these state and settings reads. */
const standingPool = (
  states: StateReads,
  settings = async () => ({ policy: { ...DEFAULT_LOGIN_POLICY }, idps: [], brand: null }),
) =>
  new InstancePool(
    { clock: { now: () => 1_000_000 } } as unknown as Core,
    () => {
      throw new Error('no instance is loaded here')
    },
    { callback: () => () => {} } as never,
    states,
    async (id) => ({ state: await states.now(id), keys: null, clients: null }),
    settings,
  )

describe('instance pool', () => {
  it('remembers `active` answers of the instances asked lately, not of every instance ever asked', async () => {
    const asked: string[] = []
    const pool = standingPool({
      now: async (id: string) => {
        asked.push(id)
        return { active: true, dataPlaneRps: null }
      },
      ahead: () => Promise.reject(new Error('no read ahead here: the clock stands still')),
    })
    // 20,000 answers fill the memo; none has expired (the clock stands still).
    for (let i = 0; i < 20_000; i++) expect(await pool.isServing(uuid(i))).toBe(true)
    expect(asked).toHaveLength(20_000)
    await pool.isServing(uuid(0))
    expect(asked).toHaveLength(20_000)
    // One more: the oldest tenth goes, and is asked again; the newest is still remembered.
    await pool.isServing(uuid(20_000))
    await pool.isServing(uuid(19_999))
    expect(asked).toHaveLength(20_001)
    await pool.isServing(uuid(0))
    expect(asked).toHaveLength(20_002)
  })

  /**
   * A pool whose state reads wait until the test answers them; `reads` lists the ids asked, and
   * whether each was a read ahead (nothing waits for it: gathered with others in a node).
   */
  function pendingPool(now = { t: 1_000_000 }) {
    const reads: { id: string; ahead: boolean; answer: (s: WorkspaceState) => void }[] = []
    const read = (ahead: boolean) => (id: string) =>
      new Promise<WorkspaceState>((answer) => reads.push({ id, ahead, answer }))
    let listener: (() => void) | undefined
    const core = {
      clock: { now: () => now.t },
      config: {
        rateLimits: {
          dataPlaneRps: 50,
          dataPlaneBurst: 200,
          dataPlaneAddressShare: 0.25,
          dataPlanePageReserve: 0.25,
        },
      },
      store: { dialect: 'sqlite', liveNodes: async () => 1 },
      instances: { subscribe: (fn: () => void) => (listener = fn) },
    } as unknown as Core
    core.limiter = createLimiter(core.store, core.clock, { ...core.config, webhooks: {} as never })
    const pool = new InstancePool(
      core,
      () => {
        throw new Error('no instance is loaded here')
      },
      { callback: () => () => {} } as never,
      { now: read(false), ahead: read(true) },
      async (id) => ({ state: await read(false)(id), keys: null, clients: null }),
      async () => ({ policy: { ...DEFAULT_LOGIN_POLICY }, idps: [], brand: null }),
    )
    return { core, pool, reads, now, changed: () => listener?.() }
  }

  it("reads a workspace's state once for the requests that ask meanwhile, and tells its listeners", async () => {
    const { pool, reads } = pendingPool()
    const heard: [string, WorkspaceState][] = []
    pool.onState((id, state) => heard.push([id, state]))
    const asking = [pool.isServing(uuid(1)), pool.isServing(uuid(1)), pool.readState(uuid(1))]
    expect(reads.map((r) => r.id)).toEqual([uuid(1)])
    reads[0]!.answer({ active: true, dataPlaneRps: 120 })
    expect(await Promise.all(asking)).toEqual([true, true, { active: true, dataPlaneRps: 120 }])
    expect(heard).toEqual([[uuid(1), { active: true, dataPlaneRps: 120 }]])
    // Remembered: asked again, not read again.
    expect(await pool.isServing(uuid(1))).toBe(true)
    expect(reads).toHaveLength(1)
    // Neither the platform nor an id that is no instance is read.
    expect(await pool.readState('platform')).toEqual({ active: true, dataPlaneRps: null })
    expect(await pool.readState('not-an-instance')).toEqual({ active: false, dataPlaneRps: null })
    expect(reads).toHaveLength(1)
  })

  it('keeps nothing of a read an eviction overtook: the next request reads again', async () => {
    const { pool, reads } = pendingPool()
    const heard: string[] = []
    pool.onState((id) => heard.push(id))
    const first = pool.isServing(uuid(2))
    pool.evict(uuid(2))
    // A request after the eviction does not wait for the read from before it.
    const second = pool.isServing(uuid(2))
    expect(reads.map((r) => r.id)).toEqual([uuid(2), uuid(2)])
    reads[0]!.answer({ active: true, dataPlaneRps: null })
    expect(await first).toBe(true)
    expect(heard).toEqual([])
    reads[1]!.answer({ active: false, dataPlaneRps: null })
    expect(await second).toBe(false)
    expect(heard).toEqual([uuid(2)])
    expect(pool.held(uuid(2))).toBeUndefined()
  })

  it('shares one read with the data-plane limiter, whichever asks first, until MEMO_MS', async () => {
    const { core, pool, reads, now } = pendingPool()
    const limit = createDataPlaneLimit(core, MEMO_MS, (id) => pool.readState(id).then((s) => s.dataPlaneRps))
    pool.onState((id, state, at) => limit.heard(id, state.dataPlaneRps, at))

    // A token request first: the limiter's read is the pool's, and the pool's state is known after it.
    const decision = limit(uuid(3), false, CLIENT)
    expect(decision).toBeInstanceOf(Promise)
    expect(reads.map((r) => r.id)).toEqual([uuid(3)])
    reads[0]!.answer({ active: true, dataPlaneRps: 500 })
    expect(await decision).toMatchObject({ allowed: true, limit: 500 })
    expect(await pool.isServing(uuid(3))).toBe(true)
    expect(reads).toHaveLength(1)

    // Discovery first: the limiter decides the next request without a read, and without a promise.
    const serving = pool.isServing(uuid(4))
    reads[1]!.answer({ active: true, dataPlaneRps: 80 })
    expect(await serving).toBe(true)
    expect(limit(uuid(4), false, CLIENT)).toMatchObject({ allowed: true, limit: 80 })
    expect(reads).toHaveLength(2)

    // Past MEMO_MS both read again, once: the limiter goes on with the rate it had meanwhile.
    now.t += MEMO_MS + 1
    expect(limit(uuid(4), false, CLIENT)).toMatchObject({ allowed: true, limit: 80 })
    const again = pool.isServing(uuid(4))
    expect(reads.map((r) => r.id)).toEqual([uuid(3), uuid(4), uuid(4)])
    reads[2]!.answer({ active: true, dataPlaneRps: 90 })
    expect(await again).toBe(true)
    expect(limit(uuid(4), false, CLIENT)).toMatchObject({ allowed: true, limit: 90 })
    expect(reads).toHaveLength(3)
  })

  it('reads an instance in use again before its memo ends, in the background; an idle one waits', async () => {
    const { pool, reads, now } = pendingPool()
    const serving = pool.isServing(uuid(5))
    reads[0]!.answer({ active: true, dataPlaneRps: null })
    expect(await serving).toBe(true)
    now.t += MEMO_MS - REFRESH_AHEAD_MS - 1
    expect(await pool.isServing(uuid(5))).toBe(true)
    expect(reads).toHaveLength(1)
    // In the memo's last REFRESH_AHEAD_MS: answered from it, and read again behind the answer, once.
    now.t += 2
    expect(await pool.isServing(uuid(5))).toBe(true)
    expect(pool.held(uuid(5))).toBeUndefined() // not loaded in this test, but asked
    expect(reads.map((r) => r.ahead)).toEqual([false, true])
    // A request meanwhile joins the read ahead.
    const joined = pool.readState(uuid(5))
    reads[1]!.answer({ active: true, dataPlaneRps: 70 })
    expect(await joined).toEqual({ active: true, dataPlaneRps: 70 })
    expect(reads).toHaveLength(2)
    // Renewed from that read: past the first memo's end, no request waits for a read.
    now.t += MEMO_MS - REFRESH_AHEAD_MS - 2
    expect(await pool.isServing(uuid(5))).toBe(true)
    expect(reads).toHaveLength(2)
    // A read ahead that finds the workspace no longer active ends the memo at once.
    now.t += 2
    expect(await pool.isServing(uuid(5))).toBe(true)
    expect(reads[2]!.ahead).toBe(true)
    reads[2]!.answer({ active: false, dataPlaneRps: null })
    await Bun.sleep(0)
    const after = pool.isServing(uuid(5))
    expect(reads).toHaveLength(4)
    expect(reads[3]!.ahead).toBe(false)
    reads[3]!.answer({ active: false, dataPlaneRps: null })
    expect(await after).toBe(false)
    // Idle through its memo's end: the next request waits for its read.
    const idle = pool.isServing(uuid(6))
    reads[4]!.answer({ active: true, dataPlaneRps: null })
    await idle
    now.t += MEMO_MS + 1
    let answered = false
    const waiting = pool.isServing(uuid(6)).then((v) => {
      answered = true
      return v
    })
    await Bun.sleep(0)
    expect(answered).toBe(false)
    reads[5]!.answer({ active: true, dataPlaneRps: null })
    expect(await waiting).toBe(true)
  })

  it("reads an instance's settings once for the requests that ask together, and again after a failed read", async () => {
    let reads = 0
    let fail = true
    const pool = standingPool(
      { now: async () => ({ active: true, dataPlaneRps: null }), ahead: () => Promise.reject() },
      async () => {
        reads++
        await Bun.sleep(1)
        if (fail) throw new Error('store out of reach')
        return { policy: { ...DEFAULT_LOGIN_POLICY }, idps: [], brand: null }
      },
    )
    const instance = { id: uuid(1) } as Instance
    const first = pool.settle(instance)
    expect(pool.settle(instance)).toBe(first)
    await expect(first).rejects.toThrow('store out of reach')
    expect(reads).toBe(1)
    fail = false
    const second = pool.settle(instance)
    expect(second).not.toBe(first)
    await second
    expect(reads).toBe(2)
    expect(pool.settle(instance)).toBeUndefined()
    expect(reads).toBe(2)
  })

  it("reads a cold instance's state with its keys, once, and a held one's state alone", async () => {
    const clock = { t: 1_000_000 }
    const loads: string[] = []
    const stateReads: string[] = []
    const active: WorkspaceState = { active: true, dataPlaneRps: null }
    const pool = new InstancePool(
      { clock: { now: () => clock.t } } as unknown as Core,
      () => ({}) as never,
      { callback: () => () => {} } as never,
      {
        now: async (id) => {
          stateReads.push(id)
          return active
        },
        ahead: () => Promise.reject(new Error('no read ahead here')),
      },
      async (id) => {
        loads.push(id)
        return {
          state: id === uuid(3) ? { active: false, dataPlaneRps: null } : active,
          keys: {} as never,
          clients: null,
        }
      },
      async () => ({ policy: { ...DEFAULT_LOGIN_POLICY }, idps: [], brand: null }),
    )
    // Discovery first: the requests asking together share the one read, and the instance it built.
    const [first, second] = await Promise.all([pool.get(uuid(1)), pool.get(uuid(1))])
    expect(first).not.toBeNull()
    expect(second).toBe(first)
    // A token request first (its limiter asks the state): the same one read brings the keys too.
    expect(await pool.readState(uuid(2))).toEqual(active)
    expect(await pool.get(uuid(2))).not.toBeNull()
    // Not serving: nothing is built.
    expect(await pool.get(uuid(3))).toBeNull()
    expect(loads).toEqual([uuid(1), uuid(2), uuid(3)])
    expect(stateReads).toEqual([])
    // Held, its memo over: its state is read alone, its keys are not read again.
    clock.t += MEMO_MS + 1
    expect(await pool.get(uuid(1))).toBe(first as Instance)
    expect(stateReads).toEqual([uuid(1)])
    expect(loads).toHaveLength(3)
  })

  it('trusts the clients a load brought only while no eviction came since the read', async () => {
    const active: WorkspaceState = { active: true, dataPlaneRps: null }
    const clients = { text: '[]', readAt: 1_000_000 }
    /** The loads under way, each answered when the test says. */
    const answers: (() => void)[] = []
    const served = new Map<string, () => unknown>()
    const answer = async () => {
      await Bun.sleep(0)
      answers.shift()?.()
    }
    const pool = new InstancePool(
      { clock: { now: () => 1_000_000 } } as unknown as Core,
      (id, _keys, loaded) => {
        served.set(id, loaded)
        return {} as never
      },
      { callback: () => () => {} } as never,
      { now: async () => active, ahead: () => Promise.reject(new Error('no read ahead here')) },
      () =>
        new Promise((resolve) => answers.push(() => resolve({ state: active, keys: {} as never, clients }))),
      async () => ({ policy: { ...DEFAULT_LOGIN_POLICY }, idps: [], brand: null }),
      // One instance held: loading another drops the first's record, its `active` answer remembered.
      1,
    )
    // Loaded cold (its first request), no eviction meanwhile: the clients are handed over.
    const one = pool.get(uuid(1))
    await answer()
    expect(await one).not.toBeNull()
    expect(served.get(uuid(1))?.()).toBe(clients)
    // An eviction (a change to any instance) after the build: not trusted any more.
    pool.evict(uuid(9))
    expect(served.get(uuid(1))?.()).toBeNull()
    // Another instance takes the pool's one place.
    const two = pool.get(uuid(2))
    await answer()
    expect(await two).not.toBeNull()
    // The first is read again (its state still remembered) and a change comes during that read:
    // the requests that waited for it are answered by a build whose clients are not trusted.
    const again = pool.get(uuid(1))
    await Bun.sleep(0)
    expect(answers).toHaveLength(1)
    pool.evict(uuid(9))
    await answer()
    expect(await again).not.toBeNull()
    expect(served.get(uuid(1))?.()).toBeNull()
  })
})
