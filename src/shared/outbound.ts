import { lookup } from 'node:dns/promises'
import { checkServerIdentity } from 'node:tls'
import { type Cidr, formatIp, inCidr, parseCidr, parseIp } from './client-address'

/**
 * Requests the product makes to addresses its users give (webhook endpoints; later SMTP servers
 * and IdP discovery), guarded against server-side request forgery: an address that reaches the
 * node's own network is refused by name at input and again after DNS, right before connecting,
 * and the connection goes to the address that was checked (no second lookup a rebinding DNS
 * server could answer differently). Redirects are never followed.
 */
export interface OutboundPolicy {
  /** `http://` as well as `https://` (tests and private installs). */
  allowHttp: boolean
  /** Private, loopback, link-local and metadata addresses (an operator's own network). */
  allowPrivate: boolean
}

/** Blocks no user-given address may reach by default (IANA special-purpose registries). */
const BLOCKED: Cidr[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  // IPv4-compatible (RFC 4291 §2.5.5.1, deprecated), which holds :: and ::1: refused whatever it
  // embeds, as a stack may still reach ::127.0.0.1 at the IPv4 address inside.
  '::/96',
  // IPv4-translated (RFC 2765 §2.1, SIIT), refused for the same reason.
  '::ffff:0:0:0/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001:db8::/32',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
].map((c) => parseCidr(c)!)
/**
 * IPv6 forms that embed an IPv4 address, judged by that address: NAT64 (RFC 6052 §2.1) in its last
 * 4 bytes, 6to4 (RFC 3056 §2) in bytes 2 to 5. IPv4-mapped (::ffff:0:0/96) is parsed as IPv4.
 */
const EMBEDS_V4: Cidr[] = ['64:ff9b::/96', '2002::/16'].map((c) => parseCidr(c)!)

/** Whether an address is one the guard refuses (private, loopback, link-local, metadata, reserved). */
export function isPrivateAddress(address: string): boolean {
  const bytes = parseIp(address)
  if (!bytes) return true
  if (EMBEDS_V4.some((c) => inCidr(bytes, c))) {
    const v4 = EMBEDS_V4[1] && inCidr(bytes, EMBEDS_V4[1]) ? bytes.slice(2, 6) : bytes.slice(12)
    return isPrivateAddress([...v4].join('.'))
  }
  return BLOCKED.some((c) => inCidr(bytes, c))
}

/** A hostname that names the node itself whatever DNS says. */
const LOCAL_NAME = /^(localhost|localhost\.localdomain|ip6-localhost|ip6-loopback)$|\.localhost$/

/** The URL's host without IPv6 brackets and without a trailing dot. */
const hostOf = (url: URL) =>
  url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase()

/**
 * Why a user-given URL is refused before any lookup (a sentence for a 422), or null when it may be
 * stored. Checked on the parsed, normalised URL: what is stored is what is judged.
 */
export function outboundUrlProblem(raw: string, policy: OutboundPolicy): string | null {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'Use an absolute URL, e.g. https://example.com/webhooks'
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:'))
    return policy.allowHttp ? 'Use an http:// or https:// URL' : 'Use an https:// URL'
  if (url.username || url.password) return 'Leave credentials out of the URL'
  if (url.hash) return 'Leave the #fragment out of the URL'
  if (policy.allowPrivate) return null
  const host = hostOf(url)
  if (LOCAL_NAME.test(host)) return 'This URL points at this server itself'
  if (parseIp(host) && isPrivateAddress(host))
    return 'This URL points at a private, loopback, link-local or metadata address'
  return null
}

export class OutboundRefused extends Error {}

/**
 * The address to connect to for `url`: its host resolved now, every answer checked. Refused
 * (OutboundRefused) when any answer is private under the policy: one public answer among private
 * ones is how a rebinding name gets in.
 */
export async function resolveOutbound(
  url: URL,
  policy: OutboundPolicy,
  resolve: (host: string) => Promise<{ address: string }[]> = (host) =>
    lookup(host, { all: true, verbatim: true }),
): Promise<string> {
  const host = hostOf(url)
  const problem = outboundUrlProblem(url.href, policy)
  if (problem) throw new OutboundRefused(problem)
  if (parseIp(host)) return host
  let answers: { address: string }[]
  try {
    answers = await resolve(host)
  } catch {
    throw new OutboundRefused(`The host ${host} did not resolve`)
  }
  if (!answers.length) throw new OutboundRefused(`The host ${host} did not resolve`)
  if (!policy.allowPrivate && answers.some((a) => isPrivateAddress(a.address)))
    throw new OutboundRefused(`The host ${host} resolves to a private, loopback or link-local address`)
  const bytes = parseIp(answers[0]!.address)
  return bytes ? formatIp(bytes) : answers[0]!.address
}

/**
 * POSTs (or any method) to a user-given URL through the guard: resolved and checked, connected
 * to that address (the name still goes in `Host` and, for https, in SNI and the certificate
 * check), never redirected. Throws OutboundRefused before connecting when the guard says no.
 */
export async function outboundFetch(
  raw: string,
  init: RequestInit & { timeoutMs: number },
  policy: OutboundPolicy,
): Promise<Response> {
  const url = new URL(raw)
  const address = await resolveOutbound(url, policy)
  const host = hostOf(url)
  const pinned = new URL(url.href)
  pinned.hostname = address.includes(':') ? `[${address}]` : address
  const headers = new Headers(init.headers)
  headers.set('host', url.host)
  const tls =
    url.protocol === 'https:' && !parseIp(host)
      ? { serverName: host, checkServerIdentity: (_: string, cert: never) => checkServerIdentity(host, cert) }
      : undefined
  return fetch(pinned.href, {
    ...init,
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(init.timeoutMs),
    ...(tls ? { tls } : {}),
  } as RequestInit)
}
