// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { isPrivateAddress, OutboundRefused, outboundUrlProblem, resolveOutbound } from './outbound'

const strict = { allowHttp: false, allowPrivate: false }

describe('the outbound guard', () => {
  it('classifies private, loopback, link-local, metadata and reserved addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:10.1.2.3',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::',
      '224.0.0.1',
      // IPv4-compatible (::/96, deprecated): refused whatever the address it holds.
      '::127.0.0.1',
      '::7f00:1',
      '::169.254.169.254',
      '::10.0.0.1',
      '::8.8.8.8',
      '::2',
      // IPv4-translated (SIIT, ::ffff:0:0:0/96), the same idea.
      '::ffff:0:127.0.0.1',
      '64:ff9b::127.0.0.1',
      '64:ff9b::10.0.0.1',
      '2002:a9fe:a9fe::1',
      '2002:0a00:0001::',
    ])
      expect([a, isPrivateAddress(a)]).toEqual([a, true])
    for (const a of [
      '93.184.216.34',
      '8.8.8.8',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::8.8.8.8',
      '2002:808:808::1',
    ])
      expect([a, isPrivateAddress(a)]).toEqual([a, false])
  })

  it('refuses at input what points inward, by address or by name, and non-https by default', () => {
    for (const url of [
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.1/',
      'https://[::1]/',
      'https://127.0.0.1:8443/x',
      'https://localhost/',
      'https://LOCALHOST./',
      'https://app.localhost/',
      'https://[::ffff:7f00:1]/',
      'https://[::127.0.0.1]/',
      'https://[::a9fe:a9fe]/',
      'https://[::]/',
      'https://0x7f.1/',
    ])
      expect([url, outboundUrlProblem(url, strict)]).not.toEqual([url, null])
    expect(outboundUrlProblem('http://example.com/hook', strict)).toBe('Use an https:// URL')
    expect(outboundUrlProblem('https://user:pw@example.com/', strict)).toBe(
      'Leave credentials out of the URL',
    )
    expect(outboundUrlProblem('https://example.com/hook', strict)).toBeNull()
    expect(outboundUrlProblem('http://127.0.0.1:9/hook', { allowHttp: true, allowPrivate: true })).toBeNull()
  })

  it('refuses a name whose DNS answers include a loopback or private address, after the lookup', async () => {
    const dns = (answers: Record<string, string[]>) => async (host: string) =>
      (answers[host] ?? []).map((address) => ({ address }))
    const resolver = dns({
      'rebind.example': ['127.0.0.1'],
      'mixed.example': ['93.184.216.34', '10.0.0.7'],
      'v6.example': ['::1'],
      'public.example': ['93.184.216.34'],
    })
    for (const host of ['rebind.example', 'mixed.example', 'v6.example'])
      await expect(resolveOutbound(new URL(`https://${host}/hook`), strict, resolver)).rejects.toBeInstanceOf(
        OutboundRefused,
      )
    await expect(resolveOutbound(new URL('https://nowhere.example/'), strict, resolver)).rejects.toThrow(
      'did not resolve',
    )
    // The address connected to is the one checked.
    expect(await resolveOutbound(new URL('https://public.example/hook'), strict, resolver)).toBe(
      '93.184.216.34',
    )
    // The system resolver, too: localhost's own answer is loopback.
    expect(
      await resolveOutbound(new URL('https://localhost/'), { allowHttp: false, allowPrivate: true }),
    ).toMatch(/^(127\.0\.0\.1|::1)$/)
  })
})
