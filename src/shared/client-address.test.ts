// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import {
  addressBucket,
  type Cidr,
  clientAddress,
  formatIp,
  fromTrustedProxy,
  inCidr,
  parseCidr,
  parseIp,
  resolveClientAddress,
} from './client-address'
import { createLogger } from './logger'
import { NodeWarnings } from './node-warnings'
import { requestIdFor } from './plugins/request-log'

const cidrs = (...list: string[]): Cidr[] =>
  list.map((text) => {
    const cidr = parseCidr(text)
    if (!cidr) throw new Error(`bad test CIDR ${text}`)
    return cidr
  })
const within = (address: string, cidr: string) => inCidr(parseIp(address)!, parseCidr(cidr)!)

describe('parseIp and formatIp', () => {
  it('reads IPv4 and IPv6 and writes the canonical form', () => {
    const cases: [string, string][] = [
      ['192.0.2.1', '192.0.2.1'],
      ['0.0.0.0', '0.0.0.0'],
      ['::1', '::1'],
      ['::', '::'],
      ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
      ['2001:0db8:0000:0001:0000:0000:0000:0001', '2001:db8:0:1::1'],
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
      ['2001:db8::', '2001:db8::'],
      ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
      ['::ffff:127.0.0.1', '127.0.0.1'],
      ['::FFFF:7f00:1', '127.0.0.1'],
      ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
    ]
    for (const [text, canonical] of cases) expect([text, formatIp(parseIp(text)!)]).toEqual([text, canonical])
  })

  it('refuses what is not exactly an address', () => {
    for (const text of [
      '',
      'unknown',
      '256.1.1.1',
      '1.2.3',
      '1.2.3.4.5',
      '01.2.3.4',
      '1.2.3.4 ',
      '0x7f.0.0.1',
      '1.2.3.4:80',
      '1::2::3',
      ':::',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7:8::',
      '12345::1',
      'fe80::1%eth0',
      '::ffff:1.2.3',
      '1.2.3.4::',
      'g::1',
    ]) {
      expect([text, parseIp(text)]).toEqual([text, null])
    }
  })
})

describe('CIDR matching', () => {
  it('matches IPv4 and IPv6 blocks by prefix', () => {
    expect(within('10.1.2.3', '10.0.0.0/8')).toBe(true)
    expect(within('11.0.0.1', '10.0.0.0/8')).toBe(false)
    expect(within('192.168.1.129', '192.168.1.128/25')).toBe(true)
    expect(within('192.168.1.127', '192.168.1.128/25')).toBe(false)
    expect(within('172.31.255.255', '172.16.0.0/12')).toBe(true)
    expect(within('172.32.0.0', '172.16.0.0/12')).toBe(false)
    expect(within('127.0.0.1', '127.0.0.1')).toBe(true)
    expect(within('127.0.0.2', '127.0.0.1/32')).toBe(false)
    expect(within('203.0.113.9', '0.0.0.0/0')).toBe(true)
    expect(within('fd12:3456::1', 'fd00::/8')).toBe(true)
    expect(within('fe80::1', 'fd00::/8')).toBe(false)
    expect(within('2001:db8:1:2::5', '2001:db8:1::/48')).toBe(true)
    expect(within('2001:db8:2::5', '2001:db8:1::/48')).toBe(false)
    expect(within('::1', '::1/128')).toBe(true)
  })

  it('matches an IPv4-mapped IPv6 address against an IPv4 block, and not an IPv6 address against it', () => {
    expect(within('::ffff:127.0.0.1', '127.0.0.0/8')).toBe(true)
    expect(within('::1', '127.0.0.0/8')).toBe(false)
    expect(within('::1', '0.0.0.0/0')).toBe(false)
  })

  it('refuses malformed blocks', () => {
    for (const text of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/-1', 'ten/8', '/8']) {
      expect([text, parseCidr(text)]).toEqual([text, null])
    }
  })
})

describe('resolveClientAddress', () => {
  const proxies = cidrs('127.0.0.1/32', '10.0.0.0/8', 'fd00::/8')

  it('is the peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(resolveClientAddress('127.0.0.1', '198.51.100.7', [])).toBe('127.0.0.1')
    expect(resolveClientAddress('203.0.113.5', '198.51.100.7', proxies)).toBe('203.0.113.5')
  })

  it('is the peer behind a trusted proxy that sent no X-Forwarded-For', () => {
    expect(resolveClientAddress('127.0.0.1', null, proxies)).toBe('127.0.0.1')
    expect(resolveClientAddress('127.0.0.1', '', proxies)).toBe('127.0.0.1')
  })

  it('walks right to left past trusted hops to the first untrusted address', () => {
    expect(resolveClientAddress('127.0.0.1', '198.51.100.7', proxies)).toBe('198.51.100.7')
    expect(resolveClientAddress('127.0.0.1', '198.51.100.7, 10.0.0.2, 10.0.0.3', proxies)).toBe(
      '198.51.100.7',
    )
    expect(resolveClientAddress('::ffff:10.0.0.1', '2001:db8::7,fd00::2', proxies)).toBe('2001:db8::7')
  })

  it('ignores spoofed entries left of the first untrusted address', () => {
    expect(resolveClientAddress('127.0.0.1', '10.0.0.9, 1.1.1.1, 198.51.100.7', proxies)).toBe('198.51.100.7')
    expect(resolveClientAddress('127.0.0.1', '127.0.0.1, 198.51.100.7', proxies)).toBe('198.51.100.7')
  })

  it('stops at a garbage entry: the trusted hop that passed it on is the client', () => {
    expect(resolveClientAddress('127.0.0.1', 'not-an-ip, 198.51.100.7', proxies)).toBe('198.51.100.7')
    expect(resolveClientAddress('127.0.0.1', 'not-an-ip, 10.0.0.4', proxies)).toBe('10.0.0.4')
    expect(resolveClientAddress('127.0.0.1', 'unknown', proxies)).toBe('127.0.0.1')
    expect(resolveClientAddress('127.0.0.1', '198.51.100.7, ', proxies)).toBe('127.0.0.1')
    expect(resolveClientAddress('127.0.0.1', '<script>, %00', proxies)).toBe('127.0.0.1')
  })

  it('is the leftmost address when every hop is trusted', () => {
    expect(resolveClientAddress('127.0.0.1', '10.0.0.8, 10.0.0.9', proxies)).toBe('10.0.0.8')
  })

  it('reads bracketed IPv6 and ports, as some proxies write them', () => {
    expect(resolveClientAddress('127.0.0.1', '[2001:db8::9]:4711', proxies)).toBe('2001:db8::9')
    expect(resolveClientAddress('127.0.0.1', '[2001:db8::9]', proxies)).toBe('2001:db8::9')
    expect(resolveClientAddress('127.0.0.1', '198.51.100.7:4711', proxies)).toBe('198.51.100.7')
  })

  it('treats an IPv4-mapped peer as the IPv4 address', () => {
    expect(resolveClientAddress('::ffff:127.0.0.1', '198.51.100.7', proxies)).toBe('198.51.100.7')
    expect(resolveClientAddress('::ffff:203.0.113.5', '198.51.100.7', proxies)).toBe('203.0.113.5')
  })
})

describe('clientAddress', () => {
  it('asks the server for the peer and reads X-Forwarded-For from the request', () => {
    const request = new Request('http://localhost/', { headers: { 'x-forwarded-for': '198.51.100.7' } })
    const server = { requestIP: () => ({ address: '::ffff:127.0.0.1' }) }
    expect(clientAddress(request, server, cidrs('127.0.0.1'))).toBe('198.51.100.7')
    expect(clientAddress(request, server, [])).toBe('127.0.0.1')
    // Under app.handle there is no server, so no peer (a request has one server: a new one here).
    const handled = new Request('http://localhost/', { headers: { 'x-forwarded-for': '198.51.100.7' } })
    expect(clientAddress(handled, null, cidrs('127.0.0.1'))).toBe('')
  })
})

describe('an X-Forwarded-For from a peer that is not trusted', () => {
  const ask = (warnings: NodeWarnings, peer: string, forwardedFor: string | null, trusted: Cidr[] = []) => {
    const headers: Record<string, string> = forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}
    const request = new Request('http://localhost/', { headers })
    return clientAddress(request, { requestIP: () => ({ address: peer }) }, trusted, warnings)
  }
  const fresh = () => {
    const lines: string[] = []
    return { lines, warnings: new NodeWarnings(createLogger('warn', (line) => lines.push(line))) }
  }

  it('is named once per peer, in canonical form; a trusted peer or no header says nothing', () => {
    const { lines, warnings } = fresh()
    ask(warnings, '10.0.0.1', '198.51.100.7', cidrs('10.0.0.0/8'))
    ask(warnings, '::ffff:192.0.2.1', null)
    expect(warnings.list()).toEqual([])
    for (let i = 0; i < 3; i++) expect(ask(warnings, '::ffff:192.0.2.1', `198.51.100.${i}`)).toBe('192.0.2.1')
    expect(warnings.list()).toHaveLength(1)
    expect(warnings.list()[0]).toEndWith('If 192.0.2.1 is your reverse proxy, set TRUSTED_PROXIES=192.0.2.1.')
    expect(lines.map((l) => JSON.parse(l).peer)).toEqual(['192.0.2.1'])
  })

  it('names no more than five peers: clients that send the header cannot fill the log', () => {
    const { lines, warnings } = fresh()
    for (let i = 1; i <= 20; i++) ask(warnings, `2001:db8::${i}`, '198.51.100.7')
    expect(lines.map((l) => JSON.parse(l).peer)).toEqual([1, 2, 3, 4, 5].map((i) => `2001:db8::${i}`))
    expect(warnings.list()).toHaveLength(5)
  })
})

describe('a request id from a proxy', () => {
  const sent = (peer: string) => ({
    request: new Request('http://localhost/', { headers: { 'x-request-id': 'edge-42.abc' } }),
    server: { requestIP: () => ({ address: peer }) },
  })

  it('is believed only from a peer among the trusted proxies', () => {
    for (const [peer, trusted, kept] of [
      ['::ffff:10.1.2.3', cidrs('10.0.0.0/8'), true],
      ['10.1.2.3', cidrs('10.0.0.0/8', 'fd00::/8'), true],
      // Proxies configured, the client not one of them: its own id is replaced.
      ['::ffff:127.0.0.1', cidrs('10.0.0.0/8'), false],
      ['192.0.2.9', cidrs('10.0.0.0/8', 'fd00::/8'), false],
      ['not an address', cidrs('10.0.0.0/8'), false],
    ] as const) {
      const { request, server } = sent(peer)
      const fromProxy = fromTrustedProxy(request, server, trusted)
      expect(fromProxy).toBe(kept)
      const ours = expect.stringMatching(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      )
      expect(requestIdFor(request, fromProxy)).toEqual(kept ? 'edge-42.abc' : ours)
    }
  })

  it('asks the server for the peer once, for the id and the client address alike', () => {
    let asked = 0
    const server = {
      requestIP: () => {
        asked++
        return { address: '10.1.2.3' }
      },
    }
    const request = new Request('http://localhost/', { headers: { 'x-forwarded-for': '198.51.100.7' } })
    const trusted = cidrs('10.0.0.0/8')
    expect(fromTrustedProxy(request, server, trusted)).toBe(true)
    expect(clientAddress(request, server, trusted)).toBe('198.51.100.7')
    expect(asked).toBe(1)
  })

  it('is not looked for when no proxy is trusted: the server is not asked', () => {
    const server = {
      requestIP: () => {
        throw new Error('asked for the peer')
      },
    }
    expect(fromTrustedProxy(new Request('http://localhost/'), server, [])).toBe(false)
  })
})

describe('addressBucket', () => {
  it('counts IPv4 per address and IPv6 per /64', () => {
    expect(addressBucket('203.0.113.9')).toBe('203.0.113.9')
    expect(addressBucket('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64')
    expect(addressBucket('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64')
    expect(addressBucket('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64')
    expect(addressBucket('::ffff:203.0.113.9')).toBe('203.0.113.9')
  })
})
