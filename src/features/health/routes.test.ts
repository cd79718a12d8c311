import { describe, expect, it } from 'bun:test'
import { testApp } from '../../../tests/support/app'
import { testStore } from '../../../tests/support/postgres'
import type { Core } from '../../core'
import { healthRoutes } from './routes'

const { app } = await testApp()
const noWarnings = { list: () => [] }
const get = (path: string) => app.handle(new Request(`http://localhost${path}`))

describe('GET /healthz', () => {
  it('answers 200 with a JSON object whose values are all strings', async () => {
    const res = await get('/healthz')
    expect(res.status).toBe(200)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({ status: 'ok', version: '0.1.0', database: 'ok' })
    // The leg's store: "sqlite" in the SQLite leg, "postgres" in the PostgreSQL leg.
    expect(body.store).toBe(testStore)
    for (const v of Object.values(body)) expect(typeof v).toBe('string')
  })

  it('answers 503, without a stack, when the database does not answer', async () => {
    const store = {
      dialect: 'postgres',
      ping: () => Promise.reject(new Error('connection refused at /secret/path')),
    }
    const res = await healthRoutes({ store, warnings: noWarnings } as unknown as Core).handle(
      new Request('http://localhost/healthz'),
    )
    expect(res.status).toBe(503)
    const text = await res.text()
    expect(JSON.parse(text)).toEqual({
      status: 'degraded',
      version: '0.1.0',
      store: 'postgres',
      database: 'unavailable',
    })
    expect(text).not.toContain('secret')
  })

  it('answers 200 degraded when the node lost its node lock (it still serves), 503 when the database is down too', async () => {
    const healthz = async (ping: () => Promise<void>, state: 'held' | 'lost') => {
      const store = { dialect: 'postgres', ping }
      const res = await healthRoutes({ store, warnings: noWarnings } as unknown as Core, { state }).handle(
        new Request('http://localhost/healthz'),
      )
      return { status: res.status, body: await res.json() }
    }
    const up = async () => {}
    const down = () => Promise.reject(new Error('connection refused'))
    expect(await healthz(up, 'held')).toEqual({
      status: 200,
      body: { status: 'ok', version: '0.1.0', store: 'postgres', database: 'ok', node_lock: 'held' },
    })
    expect(await healthz(up, 'lost')).toEqual({
      status: 200,
      body: { status: 'degraded', version: '0.1.0', store: 'postgres', database: 'ok', node_lock: 'lost' },
    })
    expect(await healthz(down, 'lost')).toEqual({
      status: 503,
      body: {
        status: 'degraded',
        version: '0.1.0',
        store: 'postgres',
        database: 'unavailable',
        node_lock: 'lost',
      },
    })
  })
})

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.1 document declaring version 0.1.0', async () => {
    const res = await get('/openapi.json')
    expect(res.status).toBe(200)
    const doc = (await res.json()) as {
      openapi: string
      info: { version: string }
      paths: Record<string, unknown>
    }
    expect(doc.openapi).toStartWith('3.1')
    expect(doc.info.version).toBe('0.1.0')
    expect(doc.paths['/healthz']).toBeDefined()
  })

  it('serves a docs page', async () => {
    const res = await get('/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(await res.text()).toContain('openapi.json')
  })
})
