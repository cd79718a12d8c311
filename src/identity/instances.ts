import type { Config } from '../config'

/** The instance that holds dashboard users; the control plane is a client of it. */
export const PLATFORM = 'platform'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Instance ids are workspace uuids or `platform`; anything else is never looked up. */
export const isInstanceId = (id: string) => id === PLATFORM || UUID.test(id)

export const issuerFor = (config: Config, instanceId: string) =>
  config.authUrlTemplate.replace('{workspace_id}', instanceId)

/**
 * Where an external IdP sends the browser back, registered at the provider: one address per
 * instance, so it is known before the IdP is created (the provider's client comes first). Which IdP
 * answers is the sign-in's own record, never the address.
 */
export const brokerRedirectUri = (config: Config, instanceId: string) =>
  `${issuerFor(config, instanceId)}/broker/callback`

export interface InstanceTarget {
  instanceId: string
  /** Path prefix of the issuer (`/i/<id>` by default, empty for a host-based template). */
  prefix: string
}

export interface InstanceAddressing {
  /** The instance a request is addressed to, or null when it is for the control plane. */
  resolve(host: string, pathname: string): InstanceTarget | null
  /** The path prefix of an instance's issuer. */
  prefixOf(instanceId: string): string
}

/**
 * Where instances live, following AUTH_URL_TEMPLATE: by path (`{BASE_URL}/i/{workspace_id}`) or by
 * host (`https://{workspace_id}.auth.example.com`). The template is read once, both ways.
 */
export function instanceAddressing(config: Config): InstanceAddressing {
  const template = new URL(config.authUrlTemplate.replace('{workspace_id}', '__ws__'))
  if (template.pathname.includes('__ws__')) {
    const [before, after] = template.pathname.split('__ws__') as [string, string]
    if (after && after !== '/') throw new Error('AUTH_URL_TEMPLATE: {workspace_id} must end the path')
    return {
      resolve(_host, pathname) {
        if (!pathname.startsWith(before)) return null
        const rest = pathname.slice(before.length)
        const slash = rest.indexOf('/')
        const instanceId = slash === -1 ? rest : rest.slice(0, slash)
        if (!instanceId) return null
        return { instanceId, prefix: before + instanceId }
      },
      prefixOf: (instanceId) => before + instanceId,
    }
  }
  const [hostBefore, hostAfter] = template.host.split('__ws__') as [string, string]
  const prefix = template.pathname.replace(/\/$/, '')
  return {
    resolve(host, pathname) {
      if (!host.startsWith(hostBefore) || !host.endsWith(hostAfter)) return null
      if (!pathname.startsWith(prefix)) return null
      const instanceId = host.slice(hostBefore.length, host.length - hostAfter.length)
      return instanceId ? { instanceId, prefix } : null
    },
    prefixOf: () => prefix,
  }
}

/**
 * How long the identity plane trusts what it read about an instance (its state, its clients)
 * without reading again. Every write of the product forgets it at once, in whichever thread or node
 * it runs (`core.instances`: NOTIFY on PostgreSQL, a channel between the threads on SQLite); this
 * bounds how late a row changed by hand is seen. Long enough that tokens spread at random over
 * thousands of workspaces do not read each one's state and client again (docs/performance.md).
 */
export const MEMO_MS = 30_000

/**
 * What an instance in use reads again before its memo ends, in the background (its state and rate,
 * its clients, gathered with the node's other reads ahead): a request of a busy instance never
 * waits on the store for them, and nothing it is answered with is older than MEMO_MS. An idle
 * instance's memo just ends. Half the memo: an instance asked for now and then is renewed through
 * a pause of several seconds. With a fifth, tokens at random over 10,000 instances after 10 s of
 * tokens elsewhere ran at ~70% of their rate before the pause (scripts/bench `memory-postgres`):
 * the memos that ended meanwhile were read again in the foreground. Gathered, twice the reads ahead
 * cost little.
 */
export const REFRESH_AHEAD_MS = MEMO_MS / 2
