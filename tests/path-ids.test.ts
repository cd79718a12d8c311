import { beforeAll, describe, expect, it } from 'bun:test'
import type { App } from '../src/app'
import { createSession, sessionCookieName } from '../src/features/auth/sessions'
import { createWorkspaceService } from '../src/features/workspaces/service'
import { PLATFORM, signUp } from '../src/identity'
import { testApp } from './support/app'
import { TEST_ACTOR } from './support/core'
import { routeKey, routeTable, type TableRoute } from './support/route-table'

// A resource id in a path that no resource could have (a NUL byte, which PostgreSQL refuses in
// text, or invisible and non-ASCII characters) is refused by validation, on every route with one,
// before any query: never a 500. Generated from the route table, so a new route is covered.
let app: App
let routes: TableRoute[]
let ws: string
let headers: Record<string, string>

beforeAll(async () => {
  const t = await testApp()
  app = t.app
  const account = await signUp(t.core, PLATFORM, { email: 'ids@example.com', password: 'a long password 1' })
  ws = (await createWorkspaceService(t.core).create(account.id, TEST_ACTOR, 'Ids')).id
  const { cookie, csrfToken } = await createSession(t.core, account.id, null)
  headers = {
    cookie: `${sessionCookieName(t.core)}=${cookie}`,
    'x-csrf-token': csrfToken,
    accept: 'application/json',
  }
  routes = routeTable(app).filter((r) => r.needs && /:(?!workspace_id\b)\w+/.test(r.path))
})

describe('a path id no resource could have', () => {
  for (const [label, bad] of [
    ['a NUL byte', '%00'],
    ['non-ASCII with a NUL', '%F4%8F%BF%BC%C4%B3%60%00%CC%AF'],
  ] as const) {
    it(`(${label}) answers 404 or 422 on every route with an id, never a 5xx`, async () => {
      expect(routes.length).toBeGreaterThan(15)
      const wrong: string[] = []
      for (const r of routes) {
        const path = r.path.replace(/:(\w+)/g, (_, name: string) => (name === 'workspace_id' ? ws : bad))
        const res = await app.handle(
          new Request(`http://localhost:8080${path}`, { method: r.method, headers }),
        )
        if (res.status !== 404 && res.status !== 422) wrong.push(`${routeKey(r)}: ${res.status}`)
      }
      expect(wrong).toEqual([])
    })
  }
})
