import { describe, expect, it } from 'bun:test'
import { t } from 'elysia'
import { testApp } from '../../../tests/support/app'
import { AppError } from '../errors'

const { core, app: base } = await testApp()
const app = base
  .post('/v1/things', ({ body }) => body, {
    body: t.Object({
      name: t.String({ minLength: 1, maxLength: 5 }),
      count: t.Integer({ minimum: 1 }),
      uris: t.Array(t.String({ format: 'uri' }), { minItems: 1 }),
    }),
  })
  .get('/v1/things/:id', ({ params }) => params, { params: t.Object({ id: t.String({ format: 'uuid' }) }) })
  .get('/v1/crash', () => {
    throw new Error('database password is hunter2')
  })
  .get('/v1/conflict', () => {
    throw new AppError('NAME_TAKEN', 409, 'That name is taken')
  })

const call = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
  app.handle(
    new Request(`http://localhost${path}`, {
      method,
      body,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    }),
  )

describe('error responses', () => {
  it('answers body validation failures with 422 in the FastAPI shape', async () => {
    const res = await call('POST', '/v1/things', JSON.stringify({ name: '', uris: [] }))
    expect(res.status).toBe(422)
    const body = (await res.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] }
    const byLoc = Object.fromEntries(body.detail.map((d) => [d.loc.join('.'), d]))
    expect(byLoc['body.name']?.type).toBe('string_too_short')
    expect(byLoc['body.count']?.type).toBe('missing')
    expect(byLoc['body.uris']?.type).toBe('too_short')
    for (const d of body.detail) expect(typeof d.msg).toBe('string')
    // one entry per field even where TypeBox reports a field twice
    expect(new Set(body.detail.map((d) => d.loc.join('.'))).size).toBe(body.detail.length)
  })

  it('points loc at array items by index', async () => {
    const res = await call(
      'POST',
      '/v1/things',
      JSON.stringify({ name: 'a', count: 1, uris: ['https://ok', 'nope'] }),
    )
    expect(res.status).toBe(422)
    expect(((await res.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
      'body',
      'uris',
      1,
    ])
  })

  it('answers malformed JSON with 422 json_invalid, not 400 or 500', async () => {
    const res = await call('POST', '/v1/things', '{"name": ')
    expect(res.status).toBe(422)
    expect(await res.json()).toEqual({
      detail: [{ loc: ['body'], msg: 'Request body is not valid JSON', type: 'json_invalid' }],
    })
  })

  it('reports path parameter failures under loc "path"', async () => {
    const res = await call('GET', '/v1/things/not-a-uuid')
    expect(res.status).toBe(422)
    expect(((await res.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual(['path', 'id'])
  })

  it('renders AppError as {"detail": message} with its status', async () => {
    const res = await call('GET', '/v1/conflict')
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual({ detail: 'That name is taken' })
  })

  it('answers unknown routes with 404 {"detail"}', async () => {
    const res = await call('GET', '/v1/nowhere')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ detail: 'Not Found' })
  })

  it('never puts a stack trace or the error text in a 500', async () => {
    const res = await call('GET', '/v1/crash')
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)).toEqual({ detail: 'Internal Server Error' })
    expect(text).not.toContain('hunter2')
    expect(text).not.toContain('at ')
    // …but the operator finds it in the log
    expect(
      core.logLines.some((l) => l.msg === 'unhandled error' && String(l.stack).includes('hunter2')),
    ).toBe(true)
  })
})

describe('request ids and the access log', () => {
  it('sets X-Request-Id and writes one access line per request', async () => {
    await Bun.sleep(5) // access lines are written after the response is sent
    const before = core.logLines.filter((l) => l.msg === 'request').length
    const res = await call('GET', '/healthz')
    const id = res.headers.get('x-request-id')
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    await Bun.sleep(5)
    const lines = core.logLines.filter((l) => l.msg === 'request')
    expect(lines.length).toBe(before + 1)
    expect(lines.at(-1)).toMatchObject({ request_id: id, method: 'GET', path: '/healthz', status: 200 })
  })

  it("replaces a client's own request id with one of ours (only a trusted proxy's is kept)", async () => {
    for (const sent of ['edge-42.abc', 'bad id <script>']) {
      const res = await call('GET', '/healthz', undefined, { 'x-request-id': sent })
      // A fresh id of our own (a random UUID may itself contain the letters "bad": CI saw one).
      expect(res.headers.get('x-request-id')).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      )
    }
  })

  it('logs the final status of error responses', async () => {
    await call('POST', '/v1/things', '{')
    await Bun.sleep(5)
    expect(core.logLines.filter((l) => l.msg === 'request').at(-1)).toMatchObject({ status: 422 })
  })
})
