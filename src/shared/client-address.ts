/**
 * The client address of a request, for both planes: the TCP peer, or, when that peer is a trusted
 * reverse proxy (TRUSTED_PROXIES), the nearest untrusted address in X-Forwarded-For. Only the
 * right end of that header is believable: each trusted hop appends the address it saw, while
 * everything to the left of the first untrusted entry may have been written by the client.
 */

import type { NodeWarnings } from './node-warnings'

/** An address block; addresses are 16 bytes, IPv4 as IPv4-mapped IPv6 (RFC 4291 §2.5.5.2). */
export interface Cidr {
  bytes: Uint8Array
  prefix: number
}

const V4_MAPPED = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]
const OCTET = /^(?:0|[1-9]\d{0,2})$/
const GROUP = /^[0-9a-fA-F]{1,4}$/

function parseV4(text: string): number[] | null {
  const parts = text.split('.')
  if (parts.length !== 4) return null
  const octets = parts.map((p) => (OCTET.test(p) ? Number(p) : 256))
  return octets.every((o) => o <= 255) ? octets : null
}

function parseGroups(list: string[], v4Tail: boolean): number[] | null {
  const bytes: number[] = []
  for (const [i, group] of list.entries()) {
    // An embedded IPv4 address may end the text (RFC 4291 §2.2, form 3).
    if (v4Tail && i === list.length - 1 && group.includes('.')) {
      const v4 = parseV4(group)
      if (!v4) return null
      bytes.push(...v4)
    } else if (GROUP.test(group)) {
      const n = Number.parseInt(group, 16)
      bytes.push(n >> 8, n & 0xff)
    } else return null
  }
  return bytes
}

function parseV6(text: string): number[] | null {
  const halves = text.split('::')
  const groups = (half: string) => (half === '' ? [] : half.split(':'))
  if (halves.length === 1) {
    const bytes = parseGroups(groups(text), true)
    return bytes?.length === 16 ? bytes : null
  }
  if (halves.length > 2) return null
  const head = parseGroups(groups(halves[0]!), false)
  const tail = parseGroups(groups(halves[1]!), true)
  if (!head || !tail) return null
  // `::` stands for at least one group of zeros.
  const gap = 16 - head.length - tail.length
  return gap >= 2 ? [...head, ...new Array<number>(gap).fill(0), ...tail] : null
}

/** 16 bytes for an IPv4 or IPv6 address in its usual text form, or null (zones and ports refused). */
export function parseIp(text: string): Uint8Array | null {
  if (text.includes('.') && !text.includes(':')) {
    const v4 = parseV4(text)
    return v4 ? Uint8Array.from([...V4_MAPPED, ...v4]) : null
  }
  const v6 = text.includes(':') ? parseV6(text) : null
  return v6 ? Uint8Array.from(v6) : null
}

const isV4Mapped = (b: Uint8Array) => V4_MAPPED.every((v, i) => b[i] === v)

/** IPv4 (also when IPv4-mapped) in dotted form; IPv6 in the canonical form of RFC 5952 §4. */
export function formatIp(b: Uint8Array): string {
  if (isV4Mapped(b)) return [...b.slice(12)].join('.')
  const groups = Array.from({ length: 8 }, (_, i) => (b[2 * i]! << 8) | b[2 * i + 1]!)
  let best = { at: -1, len: 1 }
  for (let i = 0; i < 8; ) {
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > best.len) best = { at: i, len: j - i }
    i = j === i ? i + 1 : j
  }
  const hex = groups.map((g) => g.toString(16))
  if (best.at < 0) return hex.join(':')
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`
}

/** `10.0.0.0/8`, `fd00::/8`, or a single address (`/32` or `/128`); null when invalid. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/')
  const address = slash < 0 ? text : text.slice(0, slash)
  const bytes = parseIp(address)
  if (!bytes) return null
  const v4 = !address.includes(':')
  const max = v4 ? 32 : 128
  const raw = slash < 0 ? String(max) : text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(raw) || Number(raw) > max) return null
  return { bytes, prefix: Number(raw) + (v4 ? 96 : 0) }
}

export function inCidr(address: Uint8Array, cidr: Cidr): boolean {
  for (let bit = 0; bit < cidr.prefix; bit += 8) {
    const bits = Math.min(8, cidr.prefix - bit)
    const mask = (0xff << (8 - bits)) & 0xff
    if ((address[bit / 8]! & mask) !== (cidr.bytes[bit / 8]! & mask)) return false
  }
  return true
}

/** Whether an address is in any of the blocks (the trusted proxies). */
const inAny = (address: Uint8Array, cidrs: readonly Cidr[]) => cidrs.some((c) => inCidr(address, c))

/** An X-Forwarded-For entry: an address, optionally bracketed (IPv6) or with a port. */
function parseForwarded(entry: string): Uint8Array | null {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry)
  if (bracketed) return parseIp(bracketed[1]!)
  const v4WithPort = /^([\d.]+):\d{1,5}$/.exec(entry)
  return parseIp(v4WithPort ? v4WithPort[1]! : entry)
}

/**
 * The client address given the TCP peer and the X-Forwarded-For header. Walks the header right to
 * left past trusted hops; the first untrusted address is the client. An unparsable entry stops the
 * walk: no trusted proxy wrote it, so the hop that handed it over is the client.
 */
export function resolveClientAddress(
  peer: string,
  forwardedFor: string | null,
  trusted: readonly Cidr[],
): string {
  const known = peerOf(peer)
  if (!known) return peer
  // No forwarded-for (the usual case without a proxy): the peer, parsed and formatted once.
  if (!forwardedFor) return known.text
  let client = known.bytes
  if (inAny(client, trusted)) {
    const entries = forwardedFor.split(',')
    for (let i = entries.length - 1; i >= 0; i--) {
      const hop = parseForwarded(entries[i]!.trim())
      if (!hop) break
      client = hop
      if (!inAny(hop, trusted)) break
    }
  }
  return formatIp(client)
}

/**
 * Peers seen lately, parsed and in canonical form: a node sees few distinct peers (its proxies, or
 * its clients on keep-alive connections) and this runs on every request of the identity plane.
 * Bounded by starting over, which costs one parse per peer.
 */
const peers = new Map<string, { bytes: Uint8Array; text: string } | null>()
const PEERS_KEPT = 4096

function peerOf(peer: string): { bytes: Uint8Array; text: string } | null {
  let known = peers.get(peer)
  if (known === undefined) {
    const bytes = parseIp(peer)
    known = bytes && { bytes, text: formatIp(bytes) }
    if (peers.size >= PEERS_KEPT) peers.clear()
    peers.set(peer, known)
  }
  return known
}

interface PeerSource {
  requestIP(request: Request): { address: string } | null
}

/** Each request's address once resolved: the guard, the audit actor and the log ask for it alike. */
const resolved = new WeakMap<Request, { trusted: readonly Cidr[]; address: string }>()

/**
 * The client address of a request the Bun server received (`server` is null under `app.handle`).
 * Resolved once per request (and list of trusted proxies): asking the server for the peer is a
 * system call (getpeername). An X-Forwarded-For from a peer that is not trusted is not believed,
 * and `warnings` hears of that peer: it may be a proxy missing from TRUSTED_PROXIES.
 */
export function clientAddress(
  request: Request,
  server: PeerSource | null | undefined,
  trusted: readonly Cidr[],
  warnings?: Pick<NodeWarnings, 'say'>,
): string {
  const known = resolved.get(request)
  if (known?.trusted === trusted) return known.address
  const peer = trusted.length ? proxiedPeer(request, server) : (server?.requestIP(request)?.address ?? '')
  const forwardedFor = request.headers.get('x-forwarded-for')
  const address = resolveClientAddress(peer, forwardedFor, trusted)
  if (forwardedFor && warnings) warnOfUntrustedForwarder(peer, trusted, warnings)
  resolved.set(request, { trusted, address })
  return address
}

/**
 * A peer outside TRUSTED_PROXIES that sends X-Forwarded-For is, most likely, a reverse proxy nobody
 * listed: then every client behind it has its address, and they all share one per-address budget
 * (60 unauthenticated /v1/auth calls a minute for a whole company). Said once per peer, with the
 * fix; "if": a client may send the header itself, and trusting a client would let it pick its address.
 */
function warnOfUntrustedForwarder(
  peer: string,
  trusted: readonly Cidr[],
  warnings: Pick<NodeWarnings, 'say'>,
) {
  const known = peerOf(peer)
  if (!known || inAny(known.bytes, trusted)) return
  const p = known.text
  warnings.say(
    `Requests from ${p} carry X-Forwarded-For, but ${p} is not in TRUSTED_PROXIES: every client behind it ` +
      'shares its address, in the per-address rate limits and the audit log. ' +
      `If ${p} is your reverse proxy, set TRUSTED_PROXIES=${p}.`,
    { peer: p },
  )
}

/**
 * Whether the request came straight from a trusted proxy (its TCP peer is in TRUSTED_PROXIES):
 * only then are the headers a proxy sets believed. With none configured the server is not asked.
 */
export function fromTrustedProxy(
  request: Request,
  server: PeerSource | null | undefined,
  trusted: readonly Cidr[],
): boolean {
  if (trusted.length === 0) return false
  const known = peerOf(proxiedPeer(request, server))
  return known !== null && inAny(known.bytes, trusted)
}

/**
 * The TCP peer of a request, asked once: behind proxies both the request id and the client address
 * need it. Remembered only then (without proxies the client address is the one question).
 */
const askedPeers = new WeakMap<Request, string>()
function proxiedPeer(request: Request, server: PeerSource | null | undefined): string {
  let peer = askedPeers.get(request)
  if (peer === undefined) {
    peer = server?.requestIP(request)?.address ?? ''
    askedPeers.set(request, peer)
  }
  return peer
}

/**
 * Who a per-address limit counts: an IPv4 address itself, an IPv6 address by its /64 (one
 * subscriber's prefix: anyone holds 2⁶⁴ addresses of their own /64, RFC 6177).
 */
export function addressBucket(address: string): string {
  if (!address.includes(':')) return address
  const bytes = parseIp(address)
  if (!bytes || isV4Mapped(bytes)) return bytes ? formatIp(bytes) : address
  const prefix = new Uint8Array(16)
  prefix.set(bytes.slice(0, 8))
  return `${formatIp(prefix)}/64`
}
