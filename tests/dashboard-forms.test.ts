import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { TSchema } from '@sinclair/typebox'
import { AppModel } from '../src/features/apps/model'
import { WorkspaceModel } from '../src/features/workspaces/model'
import { startTestServer, type TestServer } from './support/server'
import { json, type PlatformUser, signUpUser, waitForState } from './support/users'

// The dashboard forms read into the JSON API's models: a rule of the model shows its own message
// next to the field, and a service rule shows the same message the API answers with.

let server: TestServer
let owner: PlatformUser
let workspaceId: string

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, { email: 'forms@example.com', password: 'forms-pass-1', name: 'F' })
  const created = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Forms' })
  expect(created.status).toBe(201)
  workspaceId = String((await waitForState(owner.agent, created.body.id, 'active')).id)
})
afterAll(() => server.stop())

/** Posts a form as htmx does; answers the status and the message shown next to each field. */
async function submit(path: string, fields: Record<string, string>) {
  const res = await owner.agent.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
    body: new URLSearchParams({ _csrf: owner.csrf, ...fields }).toString(),
  })
  const html = await res.text()
  const shown: Record<string, string> = {}
  for (const [, id, text] of html.matchAll(/<p class="field-error" id="([^"]+)">([^<]*)<\/p>/g)) {
    shown[id!] = text!.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&')
  }
  return { status: res.status, shown }
}

/** The message a model's schema gives a rule (`errorMessage`, the ajv-errors shape). */
const ruleMessage = (schema: TSchema, keyword: string) => {
  const message = (schema.errorMessage as Record<string, string> | undefined)?.[keyword]
  expect(message).toBeString()
  return message!
}

const app = AppModel.create.properties
const appFields = { name: 'Form app', app_type: 'web', redirect_uris: 'https://rp.example.com/cb' }
const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://rp.example.com/cb/${i}`).join('\n')
const createAppForm = (fields: Record<string, string>) =>
  submit(`/app/workspaces/${workspaceId}/apps`, { ...appFields, ...fields })

describe('the app form', () => {
  const cases: [string, Record<string, string>, string, string][] = [
    ['an empty name', { name: '  ' }, 'app-name-error', ruleMessage(app.name, 'minLength')],
    [
      'a name of 201 characters',
      { name: 'n'.repeat(201) },
      'app-name-error',
      ruleMessage(app.name, 'maxLength'),
    ],
    [
      'no redirect URI',
      { redirect_uris: '\n \n' },
      'app-redirects-error',
      ruleMessage(app.redirect_uris, 'minItems'),
    ],
    [
      '101 redirect URIs',
      { redirect_uris: uris(101) },
      'app-redirects-error',
      ruleMessage(app.redirect_uris, 'maxItems'),
    ],
    [
      'a redirect URI of 2084 characters on line 2',
      { redirect_uris: `https://rp.example.com/cb\n${'https://rp.example.com/'.padEnd(2084, 'p')}` },
      'app-redirects-error',
      `Line 2: ${ruleMessage(app.redirect_uris.items, 'maxLength')}`,
    ],
    [
      '101 post-logout URIs',
      { post_logout_redirect_uris: uris(101) },
      'app-logout-error',
      ruleMessage(app.post_logout_redirect_uris, 'maxItems'),
    ],
  ]
  for (const [what, fields, id, message] of cases) {
    it(`shows the model's message for ${what}`, async () => {
      const { status, shown } = await createAppForm(fields)
      expect(status).toBe(422)
      expect(shown).toEqual({ [id]: message })
    })
  }

  it('shows the API message of a service rule: a control character in the name', async () => {
    const api = await json(owner.agent, 'POST', `/v1/workspaces/${workspaceId}/apps`, {
      name: 'Bell\u0007',
      redirect_uris: ['https://rp.example.com/cb'],
    })
    expect(api.status).toBe(422)
    const { status, shown } = await createAppForm({ name: 'Bell\u0007' })
    expect(status).toBe(422)
    expect(shown).toEqual({ 'app-name-error': `${api.body.detail[0].msg}.` })
  })

  it('shows the API message of a service rule on its line: an http redirect URI', async () => {
    const api = await json(owner.agent, 'POST', `/v1/workspaces/${workspaceId}/apps`, {
      name: 'Plain',
      redirect_uris: ['https://rp.example.com/cb', 'http://rp.example.com/cb'],
    })
    expect(api.status).toBe(422)
    expect(api.body.detail[0].loc).toEqual(['body', 'redirect_uris', 1])
    const { status, shown } = await createAppForm({
      redirect_uris: 'https://rp.example.com/cb\nhttp://rp.example.com/cb',
    })
    expect(status).toBe(422)
    expect(shown).toEqual({ 'app-redirects-error': `Line 2: ${api.body.detail[0].msg}.` })
  })

  it('creates the app when every rule holds, and shows the row the service created', async () => {
    const res = await owner.agent.request(`/app/workspaces/${workspaceId}/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
      body: new URLSearchParams({
        _csrf: owner.csrf,
        ...appFields,
        name: 'Created',
        dev_mode: 'true',
      }).toString(),
    })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Created is ready')
    const listed = await json(owner.agent, 'GET', `/v1/workspaces/${workspaceId}/apps`)
    const row = listed.body.items.find((a: { name: string }) => a.name === 'Created')
    expect(row).toMatchObject({ dev_mode: true, redirect_uris: ['https://rp.example.com/cb'] })
    expect(html).toContain(`id="app-${row.id}"`)
  })
})

describe('the new workspace form', () => {
  const name = WorkspaceModel.create.properties.name
  const createWorkspaceForm = (value: string) => submit('/app/workspaces', { name: value })

  it("shows the model's message for an empty name", async () => {
    const { status, shown } = await createWorkspaceForm('   ')
    expect(status).toBe(422)
    expect(shown).toEqual({ 'ws-name-error': ruleMessage(name, 'minLength') })
  })

  it("shows the model's message for a name of 101 characters", async () => {
    const { status, shown } = await createWorkspaceForm('w'.repeat(101))
    expect(status).toBe(422)
    expect(shown).toEqual({ 'ws-name-error': ruleMessage(name, 'maxLength') })
  })

  it('shows the API message of a service rule: a text-direction override in the name', async () => {
    const api = await json(owner.agent, 'POST', '/v1/workspaces', { name: 'Evil\u202eexe.txt' })
    expect(api.status).toBe(422)
    const { status, shown } = await createWorkspaceForm('Evil\u202eexe.txt')
    expect(status).toBe(422)
    expect(shown).toEqual({ 'ws-name-error': `${api.body.detail[0].msg}.` })
  })
})
