import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import type Provider from 'oidc-provider'
import type { Core } from '../../core'
import type { HostedBrand } from '../../shared/views/brand'
import type { ExternalIdp, WorkspaceState } from '../deps'
import { isInstanceId, MEMO_MS, PLATFORM, REFRESH_AHEAD_MS } from '../instances'
import type { LoginPolicy } from '../login-policy'
import type { ServedInstance, ServedKeys } from '../provider'
import type { PerInstanceField } from '../provider/instance-scope'
import type { InstanceKeyMaterial, LoadedClients, LoadedInstance } from './keys'
import { coalesced, gathered } from './read-batching'
import { identityCsp } from './security-headers'

/** How long a loaded instance serves before it is read again from the store. */
const INSTANCE_TTL_MS = 5 * 60_000

/**
 * Instances held at most: every active one of a large node (a few KiB each, docs/performance.md).
 * lru-cache allocates its slots up front: about 0.5 MiB for these.
 */
const HELD_INSTANCES = 20_000

/** The platform instance always serves, at the configured rate; an id that is no instance never does. */
const PLATFORM_STATE: WorkspaceState = Object.freeze({ active: true, dataPlaneRps: null })
const NOT_SERVING: WorkspaceState = Object.freeze({ active: false, dataPlaneRps: null })

/**
 * How the pool reads a workspace's state: `now` for a request that waits for it (alone, or with the
 * others asked while one is under way: `coalesced`), `ahead` for an instance in use read again
 * before its memo ends (nothing waits; gathered with the other reads ahead).
 */
export interface StateReads {
  now(workspaceId: string): Promise<WorkspaceState>
  ahead(workspaceId: string): Promise<WorkspaceState>
}

/** The reads of a node's pool from the states its instances serve under (`servingStates`). */
export function stateReads(
  readMany: (workspaceIds: readonly string[]) => Promise<WorkspaceState[]>,
): StateReads {
  // A workspace the read did not answer for does not serve.
  const read = async (ids: readonly string[]) => {
    const states = await readMany(ids)
    return ids.map((_, i) => states[i] ?? NOT_SERVING)
  }
  return { now: coalesced(read), ahead: gathered(read) }
}

/** Told each state the pool keeps, with when its read began (what the memo's age counts from). */
type StateListener = (instanceId: string, state: WorkspaceState, readAt: number) => void

/** Instances whose `active` answer is remembered before the expired answers are dropped: as many. */
const SERVING_MEMO_MAX = HELD_INSTANCES

/**
 * An instance as this node serves it: what the shared Provider reads of it (its keys, clients, the
 * login policy its hosted pages apply and its session lifetime follows), what its pages draw, and
 * the Provider. A change to any of it evicts the instance on every node.
 *
 * Its settings (`policy`, `idps`, `brand`, `csp`) are read by its first hosted page or interaction
 * (`InstancePool.settle`): discovery, JWKS and the token endpoints never read them, and an instance
 * that only serves those (an API's machine clients) never costs their four reads. Read before then,
 * they throw: a path that needs them and was not settled fails, it is not served without them.
 */
export interface Instance extends ServedInstance {
  /** The shared Provider (the same for every instance); call it only in `serving(instance, …)`. */
  provider: Provider
  callback: (req: IncomingMessage, res: ServerResponse) => void
  /** The external IdPs its sign-in page offers. */
  idps: ExternalIdp[]
  /** Its workspace's look on every hosted page, or null for the platform's; a change evicts too. */
  brand: HostedBrand | null
  /** The Content-Security-Policy of its responses: the plane's, allowing the brand's style. */
  csp: string
}

/** The fields of an instance every instance shares: the rest each vary per instance. */
type SharedField = 'provider' | 'callback'

/**
 * Compiles only when every field of `Instance` but the shared ones is read by some option of
 * PER_INSTANCE (provider/instance-scope.ts), and every field an option names is one of `Instance`: a field
 * added here without its option (and so its isolation case) names itself in the error.
 */
export type EveryFieldPerInstance = [
  Listed<Exclude<keyof Instance, SharedField | PerInstanceField>>,
  Listed<Exclude<PerInstanceField, keyof Instance>>,
]
type Listed<Unlisted extends never> = Unlisted

/** What an instance is built with besides its keys: read again whenever it is evicted. */
interface InstanceSettings {
  policy: LoginPolicy
  idps: ExternalIdp[]
  brand: HostedBrand | null
}

/** An instance's settings once read, with the policy its pages are answered under. */
interface Settled extends InstanceSettings {
  csp: string
}

const SETTLED = Symbol('settled')
const SETTLING = Symbol('settling')

/** The record the pool holds: the instance, its settings when read, and their read under way. */
type Held = Instance & { [SETTLED]?: Settled; [SETTLING]?: Promise<void> }

const settledOf = (instance: Held): Settled => {
  const settled = instance[SETTLED]
  if (!settled) throw new Error(`instance ${instance.id}: its settings are read before it serves a page`)
  return settled
}

/** The settings' getters, on every held instance's prototype (none of their own per instance). */
const HELD_PROTOTYPE: ThisType<Held> & object = {
  get policy() {
    return settledOf(this).policy
  },
  get idps() {
    return settledOf(this).idps
  },
  get brand() {
    return settledOf(this).brand
  },
  get csp() {
    return settledOf(this).csp
  },
}

/**
 * Active instances, loaded on first use (their keys read; a sealed key is opened by its own first
 * use, their settings read by their first page) and kept in an LRU.
 * An instance is loaded only for `platform` or a workspace that exists and is active, so
 * requests to `/i/<random>` cost one indexed lookup and no memory. Requests that arrive while an
 * instance is being loaded wait for that load.
 */
export class InstancePool {
  private readonly cache: LRUCache<string, Instance>
  private readonly building = new Map<string, Promise<Instance | null>>()
  private readonly servingUntil = new Map<string, number>()
  /** The state reads under way, by instance: the requests that ask meanwhile wait for the same one. */
  private readonly reading = new Map<string, Promise<WorkspaceState>>()
  private readonly stateListeners: StateListener[] = []
  /** Bumped by every eviction: an answer read before one is not remembered after it. */
  private generation = 0
  /** The shared Provider's request handler, made once (every instance's requests go to it). */
  private readonly callback: (req: IncomingMessage, res: ServerResponse) => void

  constructor(
    private readonly core: Core,
    /**
     * What the shared Provider reads of an instance (provider/instance-scope.ts), with the clients its load
     * read: asked for when a client is first looked up, and none once an eviction came since.
     */
    private readonly serve: (
      instanceId: string,
      keys: InstanceKeyMaterial,
      loaded: () => LoadedClients | null,
    ) => ServedKeys,
    private readonly provider: Provider,
    /** The state an instance serves under, read alone: whether it does, its own rate (`servingStates`). */
    private readonly states: StateReads,
    /** An instance's state, keys and oldest clients in one read (`loadInstance`). */
    private readonly loads: (instanceId: string) => Promise<LoadedInstance>,
    /** An instance's login policy, IdPs and brand (the features', or the platform's own). */
    private readonly settings: (instanceId: string) => Promise<InstanceSettings>,
    max = HELD_INSTANCES,
  ) {
    // The TTL is the backstop for a change this node never heard of (a message lost).
    this.cache = new LRUCache({ max, ttl: INSTANCE_TTL_MS })
    this.callback = provider.callback()
  }

  /**
   * Whether the instance may serve now. An `active` answer is remembered for a few seconds (a
   * lookup per request costs more than some endpoints); leaving `active` goes through
   * `core.instances.changed`, which forgets it at once.
   */
  async isServing(instanceId: string): Promise<boolean> {
    if (!isInstanceId(instanceId)) return false
    if (instanceId === PLATFORM) return true
    if (this.remembersServing(instanceId)) return true
    return (await this.readState(instanceId)).active
  }

  /**
   * Whether the instance's `active` answer is remembered now; near its end (REFRESH_AHEAD_MS), an
   * instance asked for is read again in the background, so its next requests find it renewed.
   */
  private remembersServing(instanceId: string): boolean {
    const until = this.servingUntil.get(instanceId)
    if (until === undefined) return false
    const left = until - this.core.clock.now()
    if (left <= 0) return false
    if (left <= REFRESH_AHEAD_MS && !this.reading.has(instanceId))
      // A failed read is the next request's to meet, once the memo ended (it awaits its own read).
      this.track(instanceId, this.states.ahead(instanceId)).catch(() => {})
    return true
  }

  /**
   * Reads the state of an instance's workspace: one read for every request that asks meanwhile
   * (a read ahead under way included), its `active` answer remembered (as `isServing` remembers
   * it) and handed to the `onState` listeners (the data-plane limiter keeps the rate), unless an
   * eviction came during the read. An instance neither held nor being built is read whole, its keys
   * with its state (`loadCold`): its first request makes one read, not two one after the other.
   */
  readState(instanceId: string): Promise<WorkspaceState> {
    if (instanceId === PLATFORM) return Promise.resolve(PLATFORM_STATE)
    if (!isInstanceId(instanceId)) return Promise.resolve(NOT_SERVING)
    const reading = this.reading.get(instanceId)
    if (reading) return reading
    // Not held nor being built: the instance is read whole (a token request's limiter asks first).
    if (!this.cache.has(instanceId) && !this.building.has(instanceId)) return this.loadCold(instanceId)
    return this.track(instanceId, this.states.now(instanceId))
  }

  /** Keeps what a read of an instance's state found (see readState), and lets others join it meanwhile. */
  private track(instanceId: string, pending: Promise<WorkspaceState>): Promise<WorkspaceState> {
    const now = this.core.clock.now()
    const generation = this.generation
    const read: Promise<WorkspaceState> = pending.then(
      (state) => {
        if (this.reading.get(instanceId) === read) this.reading.delete(instanceId)
        if (!state.active) this.servingUntil.delete(instanceId)
        if (generation !== this.generation) return state
        if (state.active) {
          if (this.servingUntil.size >= SERVING_MEMO_MAX) this.pruneServing(now)
          this.servingUntil.set(instanceId, now + MEMO_MS)
        }
        for (const listener of this.stateListeners) listener(instanceId, state, now)
        return state
      },
      (e: unknown) => {
        if (this.reading.get(instanceId) === read) this.reading.delete(instanceId)
        throw e
      },
    )
    this.reading.set(instanceId, read)
    return read
  }

  /** Hears every state the pool reads and keeps (the limiter: the workspace's own rate). */
  onState(listener: StateListener): void {
    this.stateListeners.push(listener)
  }

  /**
   * One remembered answer per instance asked lately, not per instance ever asked: the expired go,
   * then the oldest until a tenth is free (so a full memo is scanned once per thousand answers).
   */
  private pruneServing(now: number) {
    for (const [id, until] of this.servingUntil) if (until <= now) this.servingUntil.delete(id)
    for (const id of this.servingUntil.keys()) {
      if (this.servingUntil.size < SERVING_MEMO_MAX * 0.9) break
      this.servingUntil.delete(id)
    }
  }

  /** The instance when it is held and known to serve now, without a promise (every request asks). */
  held(instanceId: string): Instance | undefined {
    if (instanceId !== PLATFORM && !this.remembersServing(instanceId)) return undefined
    return this.cache.get(instanceId)
  }

  async get(instanceId: string): Promise<Instance | null> {
    if (!(await this.isServing(instanceId))) {
      this.cache.delete(instanceId)
      return null
    }
    const cached = this.cache.get(instanceId)
    if (cached) return cached
    return this.building.get(instanceId) ?? this.startBuilding(instanceId, this.load(instanceId))
  }

  /**
   * One read of a cold instance's state and keys (not its state first, its keys after): the state
   * kept as `readState` keeps it, the instance built from the keys when it serves, each waited for
   * by the requests that ask meanwhile.
   */
  private loadCold(instanceId: string): Promise<WorkspaceState> {
    const generation = this.generation
    const loaded = this.loads(instanceId)
    this.startBuilding(
      instanceId,
      loaded.then((l) =>
        l.state.active && l.keys ? this.make(instanceId, l.keys, l.clients, generation) : null,
      ),
    )
    return this.track(
      instanceId,
      loaded.then((l) => l.state),
    )
  }

  /** Registers an instance's build, so the requests that ask meanwhile wait for it (see `get`). */
  private startBuilding(instanceId: string, building: Promise<Instance | null>): Promise<Instance | null> {
    this.building.set(instanceId, building)
    // Registered before any caller awaits it: the instance is cached before they resume. Kept
    // only when no eviction came while it was loaded (an eviction drops it from `building`);
    // otherwise it serves just the requests that were waiting for it.
    const current = () => this.building.get(instanceId) === building
    building.then(
      (instance) => {
        if (!current()) return
        this.building.delete(instanceId)
        if (instance) this.cache.set(instanceId, instance)
      },
      () => {
        if (current()) this.building.delete(instanceId)
      },
    )
    return building
  }

  /** Builds an instance known to serve (its state remembered): its keys read, its state with them unused. */
  private async load(instanceId: string): Promise<Instance | null> {
    const generation = this.generation
    const { keys, clients } = await this.loads(instanceId)
    return keys ? this.make(instanceId, keys, clients, generation) : null
  }

  /**
   * The record of an instance read when the pool was at `generation`. The clients its load read are
   * trusted only while no eviction came since: an instance built from a read older than a change
   * still answers the requests that waited for it (see `startBuilding`), and those look their
   * clients up by id, after the change, as they did before clients came with the load.
   */
  private make(
    instanceId: string,
    keys: InstanceKeyMaterial,
    clients: LoadedClients | null,
    generation: number,
  ): Instance {
    const loaded = () => (clients && generation === this.generation ? clients : null)
    const held: Held = Object.create(HELD_PROTOTYPE)
    return Object.assign(held, this.serve(instanceId, keys, loaded), {
      provider: this.provider,
      callback: this.callback,
    })
  }

  /**
   * Reads the instance's settings if they were not yet (see `Instance`): undefined when they were,
   * else one read for every request that asks meanwhile. A failed read is tried again by the next.
   */
  settle(instance: Instance): Promise<void> | undefined {
    const held = instance as Held
    if (held[SETTLED]) return undefined
    held[SETTLING] ??= this.settings(instance.id).then(
      (settings) => {
        held[SETTLED] = { ...settings, csp: identityCsp(settings.brand) }
        held[SETTLING] = undefined
      },
      (e: unknown) => {
        held[SETTLING] = undefined
        throw e
      },
    )
    return held[SETTLING]
  }

  /** Forgets the instance (with the clients it memoized) and its remembered state. */
  evict(instanceId: string): void {
    this.generation++
    this.cache.delete(instanceId)
    this.building.delete(instanceId)
    this.servingUntil.delete(instanceId)
    this.reading.delete(instanceId)
  }

  /** Forgets every instance and its state: anything may have changed. */
  evictAll(): void {
    this.generation++
    this.cache.clear()
    this.building.clear()
    this.servingUntil.clear()
    this.reading.clear()
  }

  get size(): number {
    return this.cache.size
  }
}
