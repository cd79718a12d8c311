// legs: once — configuration parsing; no store is opened
import { describe, expect, it } from 'bun:test'
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { runCli } from '../tests/support/cli'
import { tempDir } from '../tests/support/core'
import { ConfigError, loadConfig } from './config'

describe('loadConfig', () => {
  it('starts with embedded defaults and generates a master key once', () => {
    const dir = tempDir()
    const a = loadConfig({ DATA_DIR: dir })
    expect(a.port).toBe(8080)
    expect(a.baseUrl).toBe('http://localhost:8080')
    expect(a.authUrlTemplate).toBe('http://localhost:8080/i/{workspace_id}')
    expect(a.databasePath).toBe(join(dir, 'gatehouse.db'))
    const keyFile = join(dir, 'master.key')
    expect(existsSync(keyFile)).toBe(true)
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)
    const b = loadConfig({ DATA_DIR: dir })
    expect(b.secretKey.equals(a.secretKey)).toBe(true)
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(a.secretKey.toString('hex'))
  })

  it('keeps DATA_DIR to its owner, also when it already existed with a wider mode', () => {
    const fresh = join(tempDir(), 'fresh')
    loadConfig({ DATA_DIR: fresh })
    expect(statSync(fresh).mode & 0o777).toBe(0o700)
    const old = tempDir()
    chmodSync(old, 0o755)
    loadConfig({ DATA_DIR: old })
    expect(statSync(old).mode & 0o777).toBe(0o700)
  })

  it('takes SECRET_KEY from the environment in hex or base64', () => {
    const hex = 'ab'.repeat(32)
    expect(loadConfig({ DATA_DIR: tempDir(), SECRET_KEY: hex }).secretKey.toString('hex')).toBe(hex)
    const b64 = Buffer.alloc(32, 7).toString('base64')
    expect(loadConfig({ DATA_DIR: tempDir(), SECRET_KEY: b64 }).secretKey.equals(Buffer.alloc(32, 7))).toBe(
      true,
    )
  })

  it('keeps a node id generated once in DATA_DIR, unless NODE_ID names the node', () => {
    const dir = tempDir()
    const first = loadConfig({ DATA_DIR: dir }).nodeId
    expect(first).toMatch(/^node-[0-9a-f]{16}$/)
    expect(readFileSync(join(dir, 'node.id'), 'utf8').trim()).toBe(first)
    expect(loadConfig({ DATA_DIR: dir }).nodeId).toBe(first)
    expect(loadConfig({ DATA_DIR: dir, NODE_ID: 'gatehouse-0.eu_west' }).nodeId).toBe('gatehouse-0.eu_west')
  })

  const bad: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['BASE_URL', { BASE_URL: 'not a url' }],
    ['BASE_URL', { BASE_URL: 'ftp://example.com' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['SECRET_KEY', { SECRET_KEY: 'short' }],
    ['JOB_WORKERS', { JOB_WORKERS: '0' }],
    ['AUTH_URL_TEMPLATE', { AUTH_URL_TEMPLATE: 'https://auth.example.com' }],
    ['SMTP_URL', { SMTP_URL: 'mail.example.com' }],
    ['DEV_OUTBOX', { DEV_OUTBOX: 'yes' }],
    ['DEV_OUTBOX', { DEV_OUTBOX: 'TRUE ' }],
    ['NODE_ID', { NODE_ID: 'node:1' }],
    ['NODE_ID', { NODE_ID: 'a'.repeat(64) }],
    ['RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE', { RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE: '0' }],
    ['RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE', { RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE: '25%' }],
    ['RATE_LIMIT_DATA_PLANE_PAGE_RESERVE', { RATE_LIMIT_DATA_PLANE_PAGE_RESERVE: '1' }],
    ['RATE_LIMIT_DATA_PLANE_PAGE_RESERVE', { RATE_LIMIT_DATA_PLANE_PAGE_RESERVE: '.5' }],
  ]
  it('gives one client address a quarter of an instance, and keeps a quarter of its burst for pages', () => {
    const limits = (env: Record<string, string> = {}) =>
      loadConfig({ DATA_DIR: tempDir(), ...env }).rateLimits
    expect(limits()).toMatchObject({ dataPlaneAddressShare: 0.25, dataPlanePageReserve: 0.25 })
    expect(
      limits({ RATE_LIMIT_DATA_PLANE_ADDRESS_SHARE: '1', RATE_LIMIT_DATA_PLANE_PAGE_RESERVE: '0.1' }),
    ).toMatchObject({ dataPlaneAddressShare: 1, dataPlanePageReserve: 0.1 })
  })

  for (const [variable, env] of bad) {
    it(`rejects a bad ${variable} (${Object.values(env)[0]}) naming the variable`, () => {
      try {
        loadConfig({ DATA_DIR: tempDir(), ...env })
        throw new Error('expected a ConfigError')
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError)
        expect((e as ConfigError).variable).toBe(variable)
        expect((e as Error).message).toStartWith(`invalid ${variable}: `)
      }
    })
  }
})

describe('DEV_OUTBOX', () => {
  const devOutbox = (env: Record<string, string>) => loadConfig({ DATA_DIR: tempDir(), ...env }).devOutbox

  it("is on by default with a loopback BASE_URL and no SMTP, whatever HOST is (the README's npm start)", () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).host).toBe('0.0.0.0')
    expect(devOutbox({})).toBe(true)
    for (const HOST of ['0.0.0.0', '::', '192.168.1.5', '127.0.0.1', '::1', 'localhost'])
      expect(devOutbox({ HOST, BASE_URL: 'http://localhost:8080' })).toBe(true)
    expect(devOutbox({ BASE_URL: 'http://127.0.0.1:8080' })).toBe(true)
    expect(devOutbox({ BASE_URL: 'http://[::1]:8080' })).toBe(true)
  })

  it('is off by default with a public BASE_URL or an SMTP server', () => {
    expect(devOutbox({ HOST: '127.0.0.1', BASE_URL: 'https://auth.example.com' })).toBe(false)
    expect(devOutbox({ BASE_URL: 'http://localhost.example.com' })).toBe(false)
    expect(devOutbox({ HOST: '0.0.0.0', SMTP_URL: 'smtp://127.0.0.1:2525' })).toBe(false)
  })

  it('follows an explicit true or false', () => {
    expect(devOutbox({ HOST: '0.0.0.0', DEV_OUTBOX: 'true' })).toBe(true)
    expect(devOutbox({ HOST: '127.0.0.1', DEV_OUTBOX: 'false' })).toBe(false)
    expect(devOutbox({ HOST: '0.0.0.0', BASE_URL: 'http://localhost:8080', DEV_OUTBOX: 'false' })).toBe(false)
  })
})

describe('TRUSTED_PROXIES', () => {
  it('trusts no proxy by default', () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).trustedProxies).toEqual([])
  })

  it('reads a comma-separated list of IPv4 and IPv6 CIDRs and single addresses', () => {
    const { trustedProxies } = loadConfig({
      DATA_DIR: tempDir(),
      TRUSTED_PROXIES: ' 10.0.0.0/8, fd00::/8 ,127.0.0.1,',
    })
    expect(trustedProxies.map((c) => c.prefix)).toEqual([8 + 96, 8, 32 + 96])
  })

  for (const value of ['10.0.0.0/33', 'localhost', '10.0.0.0/8, nope', '192.168.1.0/24;10.0.0.0/8']) {
    it(`rejects "${value}" naming the variable`, () => {
      expect(() => loadConfig({ DATA_DIR: tempDir(), TRUSTED_PROXIES: value })).toThrow(
        /^invalid TRUSTED_PROXIES: /,
      )
    })
  }
})

describe('external IdPs', () => {
  it('has the providers own endpoints and no platform IdP by default', () => {
    const { idps } = loadConfig({ DATA_DIR: tempDir() })
    expect(idps.platform).toEqual([])
    expect(idps.endpoints.google.issuer).toBe('https://accounts.google.com')
    expect(idps.endpoints.github.api).toBe('https://api.github.com')
  })

  it('takes each platform provider from its id and secret, and a company IdP from PLATFORM_OIDC_*', () => {
    const { idps } = loadConfig({
      DATA_DIR: tempDir(),
      GITHUB_CLIENT_ID: 'gh',
      GITHUB_CLIENT_SECRET: 'gh-secret',
      PLATFORM_OIDC_ISSUER: 'https://sso.example.com/',
      PLATFORM_OIDC_CLIENT_ID: 'corp',
      PLATFORM_OIDC_CLIENT_SECRET: 'corp-secret',
      PLATFORM_OIDC_NAME: 'Example SSO',
    })
    expect(idps.platform).toEqual([
      { type: 'github', name: 'GitHub', clientId: 'gh', clientSecret: 'gh-secret', issuer: null },
      {
        type: 'oidc',
        name: 'Example SSO',
        clientId: 'corp',
        clientSecret: 'corp-secret',
        issuer: 'https://sso.example.com',
      },
    ])
  })

  it('replaces an entry of the endpoint table from IDP_ENDPOINTS, keeping the others', () => {
    const github = {
      authorization: 'https://ghe.example.com/login/oauth/authorize',
      token: 'https://ghe.example.com/login/oauth/access_token',
      api: 'https://ghe.example.com/api/v3',
    }
    const { idps } = loadConfig({ DATA_DIR: tempDir(), IDP_ENDPOINTS: JSON.stringify({ github }) })
    expect(idps.endpoints.github).toEqual(github)
    expect(idps.endpoints.microsoft.token).toBe('https://login.microsoftonline.com/common/oauth2/v2.0/token')
  })

  const bad: [Record<string, string>, RegExp][] = [
    [{ GOOGLE_CLIENT_ID: 'g' }, /^invalid GOOGLE_CLIENT_SECRET: /],
    [{ MICROSOFT_CLIENT_SECRET: 's' }, /^invalid MICROSOFT_CLIENT_ID: /],
    [{ PLATFORM_OIDC_CLIENT_ID: 'c', PLATFORM_OIDC_CLIENT_SECRET: 's' }, /^invalid PLATFORM_OIDC_ISSUER: /],
    [{ IDP_ENDPOINTS: '[1]' }, /^invalid IDP_ENDPOINTS: /],
    [{ IDP_ENDPOINTS: '{"myspace": {}}' }, /^invalid IDP_ENDPOINTS: unknown provider "myspace"/],
    [
      { IDP_ENDPOINTS: '{"github": {"authorization": "https://a.example"}}' },
      /^invalid IDP_ENDPOINTS: github.token is missing/,
    ],
    [
      { IDP_ENDPOINTS: '{"github": {"authorization": "ftp://a", "token": "https://b", "api": "https://c"}}' },
      /^invalid IDP_ENDPOINTS: /,
    ],
  ]
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)} naming the variable`, () => {
      expect(() => loadConfig({ DATA_DIR: tempDir(), ...env })).toThrow(message)
    })
  }
})

describe('the CLI on a bad value', () => {
  it('stops with one clear line naming the variable, never a stack trace', () => {
    const proc = Bun.spawnSync(['bun', 'src/main.ts', 'serve'], {
      env: { ...process.env, DATA_DIR: tempDir(), PORT: 'abc' },
      cwd: join(import.meta.dir, '..'),
    })
    expect(proc.exitCode).toBe(2)
    const stderr = proc.stderr.toString().trim()
    expect(stderr).toBe('gatehouse: invalid PORT: expected an integer from 0 to 65535, got "abc"')
    expect(proc.stdout.toString()).toBe('')
  })
})

describe('DATABASE_URL and DATABASE_POOL_SIZE', () => {
  const KEY = 'cd'.repeat(32)
  const PASSWORD = 'hunter2-do-not-print'

  /** The ConfigError loadConfig throws for `env` (on a fresh DATA_DIR). */
  function refusal(env: Record<string, string>): ConfigError {
    try {
      loadConfig({ DATA_DIR: tempDir(), ...env })
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError)
      return e as ConfigError
    }
    throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`)
  }

  it('is SQLite in DATA_DIR when unset or empty', () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).databaseUrl).toBeNull()
    expect(loadConfig({ DATA_DIR: tempDir(), DATABASE_URL: '' }).databaseUrl).toBeNull()
  })

  it('takes a postgres:// or postgresql:// URL with SECRET_KEY, and writes no key file', () => {
    for (const url of [
      `postgres://gatehouse:${PASSWORD}@db.internal:5432/gatehouse`,
      'postgresql://gatehouse@10.0.0.5/gatehouse?sslmode=require',
    ]) {
      const dir = tempDir()
      const config = loadConfig({ DATA_DIR: dir, DATABASE_URL: url, SECRET_KEY: KEY })
      expect(config.databaseUrl).toBe(url)
      expect(config.secretKey.toString('hex')).toBe(KEY)
      // Every node unseals with SECRET_KEY: no per-node key file.
      expect(existsSync(join(dir, 'master.key'))).toBe(false)
    }
  })

  for (const url of [
    `mysql://gatehouse:${PASSWORD}@db.example.com:3306/gatehouse`,
    `sqlite:///var/lib/gatehouse/${PASSWORD}.db`,
    `https://gatehouse:${PASSWORD}@db.example.com/gatehouse`,
    'postgres:///gatehouse',
    `not a url ${PASSWORD}`,
  ]) {
    it(`refuses DATABASE_URL=${url.replace(PASSWORD, '…')} naming the variable, never echoing the URL`, () => {
      const e = refusal({ DATABASE_URL: url, SECRET_KEY: KEY })
      expect(e.variable).toBe('DATABASE_URL')
      expect(e.message).toStartWith('invalid DATABASE_URL: ')
      expect(e.message).not.toContain(PASSWORD)
    })
  }

  it('requires SECRET_KEY with a PostgreSQL DATABASE_URL (every node unseals the same secrets)', () => {
    const dir = tempDir()
    try {
      loadConfig({ DATA_DIR: dir, DATABASE_URL: `postgres://gatehouse:${PASSWORD}@db.internal/gatehouse` })
      throw new Error('expected a ConfigError')
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError)
      expect((e as ConfigError).variable).toBe('SECRET_KEY')
      expect((e as Error).message).toStartWith('invalid SECRET_KEY: ')
      expect((e as Error).message).not.toContain(PASSWORD)
    }
    expect(existsSync(join(dir, 'master.key'))).toBe(false)
  })

  it('sizes the pool from DATABASE_POOL_SIZE, 10 by default', () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).databasePoolSize).toBe(10)
    expect(loadConfig({ DATA_DIR: tempDir(), DATABASE_POOL_SIZE: '1' }).databasePoolSize).toBe(1)
    expect(loadConfig({ DATA_DIR: tempDir(), DATABASE_POOL_SIZE: '64' }).databasePoolSize).toBe(64)
  })

  for (const size of ['0', '-1', 'ten', '2.5', '1001', ' 5']) {
    it(`refuses DATABASE_POOL_SIZE="${size}" naming the variable`, () => {
      const e = refusal({ DATABASE_POOL_SIZE: size })
      expect(e.variable).toBe('DATABASE_POOL_SIZE')
      expect(e.message).toStartWith('invalid DATABASE_POOL_SIZE: ')
    })
  }

  it('gatehouse serve stops with one line and exit 2 on a DATABASE_URL it cannot use', async () => {
    const serve = (env: Record<string, string>) =>
      runCli(['serve'], { DATA_DIR: tempDir(), HOST: '127.0.0.1', PORT: '0', ...env })
    const [sqlite, mysql, noKey] = await Promise.all([
      serve({ DATABASE_URL: 'sqlite://x' }),
      serve({ DATABASE_URL: `mysql://gatehouse:${PASSWORD}@db.example.com/gatehouse` }),
      serve({ DATABASE_URL: `postgres://gatehouse:${PASSWORD}@127.0.0.1:1/gatehouse` }),
    ])
    expect(sqlite).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'gatehouse: invalid DATABASE_URL: expected a postgres:// or postgresql:// URL, got a sqlite: URL\n',
    })
    expect(mysql).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'gatehouse: invalid DATABASE_URL: expected a postgres:// or postgresql:// URL, got a mysql: URL\n',
    })
    expect(noKey.code).toBe(2)
    expect(noKey.stdout).toBe('')
    expect(noKey.stderr).toMatch(/^gatehouse: invalid SECRET_KEY: required with DATABASE_URL[^\n]*\n$/)
    expect(noKey.stderr).not.toContain(PASSWORD)
  }, 30_000)
})

describe('billing', () => {
  const stripe = {
    STRIPE_SECRET_KEY: 'sk_test_abc123',
    STRIPE_WEBHOOK_SECRET: 'whsec_abc123',
    STRIPE_PRICE_FREE: 'price_free',
    STRIPE_PRICE_PRO: 'price_pro',
  }

  it('is off without STRIPE_SECRET_KEY (the other STRIPE_* unread); the plans keep their terms', () => {
    const config = loadConfig({ DATA_DIR: tempDir(), STRIPE_WEBHOOK_SECRET: 'not read' })
    expect(config.billing.stripe).toBeNull()
    expect(config.billing.plans.free).toEqual({ includedMau: 1000, overageCents: 0 })
  })

  it("reads Stripe's settings, the API host as an origin", () => {
    const config = loadConfig({ DATA_DIR: tempDir(), ...stripe, STRIPE_API_HOST: 'http://127.0.0.1:12111' })
    expect(config.billing.stripe).toMatchObject({
      prices: { free: 'price_free', pro: 'price_pro', enterprise: null },
      api: { host: '127.0.0.1', port: 12111, protocol: 'http' },
      mauMeterEvent: null,
    })
    expect(loadConfig({ DATA_DIR: tempDir(), ...stripe }).billing.stripe!.api).toEqual({
      host: 'api.stripe.com',
      port: 443,
      protocol: 'https',
    })
  })

  for (const [variable, env] of [
    ['STRIPE_WEBHOOK_SECRET', { STRIPE_WEBHOOK_SECRET: '' }],
    ['STRIPE_PRICE_PRO', { STRIPE_PRICE_PRO: 'prod_123' }],
    ['STRIPE_SECRET_KEY', { STRIPE_SECRET_KEY: 'pk_test_public' }],
    ['STRIPE_API_HOST', { STRIPE_API_HOST: 'https://api.stripe.com/v1' }],
  ] as const) {
    it(`refuses a bad ${variable}, naming it and never echoing a secret`, () => {
      let error: unknown
      try {
        loadConfig({ DATA_DIR: tempDir(), ...stripe, ...env })
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).variable).toBe(variable)
      expect((error as Error).message).not.toContain('sk_test')
      expect((error as Error).message).not.toContain('whsec_')
    })
  }
})
