// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { tempDir } from '../../tests/support/core'
import { loadConfig } from '../config'
import { instanceAddressing, isInstanceId, issuerFor } from './instances'

const ws = '3f0c6f5e-8a0b-4c53-9d8e-2b7f0c1a9e44'

describe('instance addressing', () => {
  it('resolves path-based issuers (the default {BASE_URL}/i/{workspace_id})', () => {
    const config = loadConfig({ DATA_DIR: tempDir(), BASE_URL: 'https://gh.example.com' })
    const { resolve } = instanceAddressing(config)
    expect(issuerFor(config, ws)).toBe(`https://gh.example.com/i/${ws}`)
    expect(resolve('gh.example.com', `/i/${ws}/token`)).toEqual({ instanceId: ws, prefix: `/i/${ws}` })
    expect(resolve('gh.example.com', '/i/platform')).toEqual({
      instanceId: 'platform',
      prefix: '/i/platform',
    })
    expect(resolve('gh.example.com', '/v1/workspaces')).toBeNull()
  })

  it('resolves host-based issuers from AUTH_URL_TEMPLATE', () => {
    const config = loadConfig({
      DATA_DIR: tempDir(),
      AUTH_URL_TEMPLATE: 'https://{workspace_id}.auth.example.com',
    })
    const { resolve } = instanceAddressing(config)
    expect(issuerFor(config, ws)).toBe(`https://${ws}.auth.example.com`)
    expect(resolve(`${ws}.auth.example.com`, '/.well-known/openid-configuration')).toEqual({
      instanceId: ws,
      prefix: '',
    })
    expect(resolve('auth.example.com', '/jwks')).toBeNull()
    expect(resolve('gh.example.com', '/v1/auth/me')).toBeNull()
  })

  it('accepts only uuids and platform as instance ids', () => {
    expect(isInstanceId(ws)).toBe(true)
    expect(isInstanceId('platform')).toBe(true)
    expect(isInstanceId('../etc')).toBe(false)
    expect(isInstanceId('not-a-uuid')).toBe(false)
  })
})
