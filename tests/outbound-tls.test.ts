// legs: once — the outbound TLS guard; no store
import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'

// The outbound guard connects to the address it checked, not to the name (no second DNS answer a
// rebinding server could change): for https the name must still be the one TLS verifies. A child
// process trusting the test CA (tests/fixtures/tls) posts to https://localhost through the guard.
const probe = (cert: string, trustCa: boolean) => {
  const run = Bun.spawnSync(['bun', join(import.meta.dir, 'fixtures/outbound-tls-probe.ts'), cert], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ...(trustCa ? { NODE_EXTRA_CA_CERTS: join(import.meta.dir, 'fixtures/tls/ca.pem') } : {}),
    },
  })
  return run.stdout.toString().trim()
}

describe('an https delivery through the outbound guard', () => {
  it('reaches the pinned address with the name in Host and SNI, and verifies the certificate against the name', () => {
    expect(probe('localhost', true)).toMatch(/^status 200 host=localhost:\d+$/)
    // A certificate for another name, even from a trusted CA: refused.
    expect(probe('other.example', true)).toStartWith('error ')
    expect(probe('other.example', true)).toContain('other.example')
    // An untrusted issuer: refused.
    expect(probe('localhost', false)).toStartWith('error ')
  })
})
