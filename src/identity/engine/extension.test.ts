// legs: once — composition of plain objects, no store
import { describe, expect, it } from 'bun:test'
import type { Core } from '../../core'
import { composeExtensions, type Extending, type IdentityExtension, signUpsBlocked } from './extension'

const core = {} as Core
const owner = (name: string, identity: IdentityExtension): Extending => ({ name, identity: () => identity })
/** One feature providing what the engine cannot start without. */
const required = owner('base', {
  clients: { find: async (keys) => keys.map(() => null) },
  loginPolicy: async () => {
    throw new Error('not asked')
  },
  mail: { send: () => undefined },
  sessions: { end: async () => {} },
})
const step = (name: string, order: number) => ({
  name,
  order,
  check: () => true,
  page: async () => ({ done: true as const }),
})

describe('composeExtensions', () => {
  it('concatenates the points in feature order, steps by their order, and takes each source of its owner', async () => {
    const ran: string[] = []
    const composed = composeExtensions(core, [
      required,
      owner('tenants', {
        claims: [{ scope: 'tenants', claims: ['tenants'], read: async () => ({ tenants: [] }) }],
        signedIn: [async () => void ran.push('tenants')],
        steps: [step('terms', 20)],
      }),
      { name: 'nothing' },
      owner('billing', {
        signedIn: [async () => void ran.push('billing')],
        signUpChecks: [{ name: 'mau', blocks: async (ws) => ws === 'ws_full' }],
        steps: [step('survey', 10), step('welcome', 20)],
        instanceName: async () => 'Acme',
      }),
    ])
    expect(composed.claims.map((c) => c.scope)).toEqual(['tenants'])
    for (const hook of composed.signedIn) await hook('ws', { id: 'u', email: 'a@b.c', emailVerified: true })
    expect(ran).toEqual(['tenants', 'billing'])
    expect(composed.steps.map((s) => s.name)).toEqual(['survey', 'terms', 'welcome'])
    expect(composed.grants).toEqual([])
    expect(composed.endpoints).toEqual([])
    expect(await composed.instanceName?.('ws')).toBe('Acme')
    expect(composed.branding).toBeNull()
    expect(composed.externalIdps).toBeNull()
    expect(composed.resourceServers).toBeNull()
    expect(await signUpsBlocked(composed, 'ws_full')).toBe(true)
    expect(await signUpsBlocked(composed, 'ws_other')).toBe(false)
  })

  it('refuses a source provided by two features, naming both', () => {
    expect(() =>
      composeExtensions(core, [
        required,
        owner('branding', { branding: { settings: async () => null, logo: async () => null } }),
        owner('themes', { branding: { settings: async () => null, logo: async () => null } }),
      ]),
    ).toThrow('identity source "branding" is provided by two features: branding and themes')
    expect(() =>
      composeExtensions(core, [required, owner('auth2', { sessions: { end: async () => {} } })]),
    ).toThrow('identity source "sessions" is provided by two features: base and auth2')
  })

  it('refuses to start without a required source, naming it', () => {
    expect(() => composeExtensions(core, [owner('apps', { clients: { find: async () => [] } })])).toThrow(
      'no feature provides the identity sources loginPolicy, mail, sessions',
    )
  })

  it('refuses two steps, claim scopes or grant types of one name', () => {
    expect(() =>
      composeExtensions(core, [
        required,
        owner('a', { steps: [step('terms', 1)] }),
        owner('b', { steps: [step('terms', 2)] }),
      ]),
    ).toThrow('the interaction step "terms"')
    const grant = { type: 'urn:x', parameters: [], handle: async () => ({}) }
    expect(() => composeExtensions(core, [required, owner('a', { grants: [grant, grant] })])).toThrow(
      'the grant type "urn:x"',
    )
  })
})
