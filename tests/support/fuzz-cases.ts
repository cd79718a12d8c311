// The cases of the fuzzer (fuzz.ts): requests to every route of /openapi.json, the dashboard forms
// and an identity instance's endpoints, with hostile bodies, headers, cookies and path parameters.
import {
  anyValue,
  chance,
  deeplyNested,
  fromSchema,
  hostileString,
  int,
  type JsonSchema,
  pick,
  prng,
  type Rand,
} from './fuzz-values'

export interface FuzzRoute {
  method: string
  /** OpenAPI template, e.g. `/v1/workspaces/{workspace_id}`. */
  path: string
  body?: JsonSchema
}

export interface FuzzTargets {
  baseUrl: string
  routes: FuzzRoute[]
  /** A signed-in platform user: session cookie name and value, its CSRF token, optionally a bearer token. */
  session: { cookieName: string; cookie: string; csrf: string; bearer?: string }
  /** Real ids to put in paths: workspaces the user owns, ones it does not, apps. */
  ids: { workspace: string[]; foreignWorkspace: string[]; app: string[] }
  /** Identity instances to hit (`platform`, an active workspace id), a client of each, a signed-in user's cookies. */
  instances: { id: string; clientId: string; redirectUri: string; cookie?: string }[]
}

export interface FuzzCase {
  /** The route it exercises, as `METHOD /template`. */
  route: string
  method: string
  url: string
  headers: [string, string][]
  body?: string
}

/** The fields of the dashboard's forms (the routes take form bodies and declare no schema). */
const FORM_FIELDS: Record<string, string[]> = {
  'POST /app/workspaces': ['name'],
  'POST /app/workspaces/{workspace_id}/apps': [
    'name',
    'app_type',
    'redirect_uris',
    'post_logout_redirect_uris',
    'dev_mode',
  ],
}

// Paths below an identity instance's issuer: oidc-provider's endpoints and our hosted pages.
const IDENTITY_PATHS = [
  ['GET', '/.well-known/openid-configuration'],
  ['GET', '/jwks'],
  ['GET', '/auth'],
  ['POST', '/auth'],
  ['POST', '/token'],
  ['GET', '/me'],
  ['POST', '/me'],
  ['POST', '/token/introspection'],
  ['POST', '/token/revocation'],
  ['POST', '/device/auth'],
  ['GET', '/device'],
  ['POST', '/device'],
  ['GET', '/session/end'],
  ['POST', '/session/end'],
  ['POST', '/session/end/confirm'],
  ['GET', '/interaction/{uid}'],
  ['POST', '/interaction/{uid}/login'],
  ['GET', '/interaction/{uid}/signup'],
  ['POST', '/interaction/{uid}/signup'],
  ['GET', '/interaction/{uid}/abort'],
  ['GET', '/interaction/{uid}/verify'],
  ['POST', '/interaction/{uid}/verify'],
  ['GET', '/interaction/{uid}/verify-email'],
  ['GET', '/interaction/{uid}/forgot'],
  ['POST', '/interaction/{uid}/forgot'],
  ['GET', '/interaction/{uid}/reset-password'],
  ['POST', '/interaction/{uid}/reset-password'],
  ['GET', '/forgot-password'],
  ['POST', '/forgot-password'],
  ['GET', '/reset-password'],
  ['POST', '/reset-password'],
  ['GET', '/verify-email'],
  ['GET', '/no-such-endpoint'],
] as const

const IDENTITY_PARAMS = [
  'client_id',
  'response_type',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'prompt',
  'max_age',
  'claims',
  'request',
  'request_uri',
  'response_mode',
  'ui_locales',
  'id_token_hint',
  'post_logout_redirect_uri',
  'grant_type',
  'code',
  'refresh_token',
  'device_code',
  'user_code',
  'token',
  'token_type_hint',
  'client_secret',
  'client_assertion',
  'resource',
  'email',
  'password',
  'name',
  'xsrf',
  'logout',
  'token',
]

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzz',
  'multipart/form-data',
  'text/plain',
  'application/xml',
  'application/merge-patch+json',
  ';;;',
  'application/json, text/plain',
]

/** Latin-1 only: fetch refuses other header values outright, which tests nothing on the server. */
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e\x80-\xff]/g, '').slice(0, 8192)

function hostileId(r: Rand, real: string[]): string {
  if (real.length && chance(r, 0.55)) return pick(r, real)
  const raw = hostileString(r, { huge: 0.005 })
  return chance(r, 0.8)
    ? encodeURIComponent(raw.toWellFormed())
    : pick(r, ['%', '%ZZ', '%00', '..', '.', '%2e%2e', '%2F', raw])
}

function authHeaders(r: Rand, t: FuzzTargets, allowSession: boolean): [string, string][] {
  const { cookieName, cookie, csrf, bearer } = t.session
  const roll = r()
  if (roll < 0.2) return []
  if (roll < 0.6 && allowSession) {
    const out: [string, string][] = [['cookie', `${cookieName}=${cookie}`]]
    if (chance(r, 0.85)) out.push(['x-csrf-token', csrf])
    else if (chance(r, 0.5)) out.push(['x-csrf-token', headerSafe(hostileString(r, { huge: 0 }))])
    return out
  }
  if (roll < 0.7 && bearer && allowSession) return [['authorization', `Bearer ${bearer}`]]
  if (roll < 0.85) {
    return [
      [
        'authorization',
        pick(r, [
          'Bearer',
          'Bearer ',
          'Bearer a.b.c',
          'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
          `Bearer ${'A'.repeat(int(r, 1, 9000))}`,
          'Basic !!!',
          `Basic ${Buffer.from(headerSafe(hostileString(r, { huge: 0 }))).toString('base64')}`,
          'Digest username="x"',
          'bearer    token',
          'Bearer a, Bearer b',
        ]),
      ],
    ]
  }
  return [
    [
      'cookie',
      pick(r, [
        `${cookieName}=garbage`,
        `${cookieName}=`,
        `${cookieName}=${'x'.repeat(int(r, 1, 8000))}`,
        `${cookieName}=${cookie}; ${cookieName}=garbage`,
        ';;;=;',
        '_session=garbage; _interaction=x; _session.sig=y',
        `${cookieName}="${headerSafe(hostileString(r, { huge: 0 }))}"`,
      ]),
    ],
  ]
}

/** Extra headers: duplicates (fetch joins them with ", "), odd Accept, htmx, origins, request ids. */
function noiseHeaders(r: Rand): [string, string][] {
  const out: [string, string][] = []
  // Bun builds request.url from Host, so a malformed one reaches the front door's URL parsing.
  if (chance(r, 0.03))
    out.push(['host', pick(r, ['evil.example', 'a:b:c', '[::1', 'localhost:99999', '%', 'x y', ''])])
  const n = int(r, 0, 3)
  for (let i = 0; i < n; i++) {
    out.push(
      pick(r, [
        ['accept', pick(r, ['application/json', 'text/html', '*/*', 'text/html, application/json', ''])],
        ['hx-request', pick(r, ['true', 'false', 'TRUE'])],
        ['origin', pick(r, ['https://evil.example', 'null', ''])],
        ['x-request-id', headerSafe(hostileString(r, { huge: 0 }))],
        ['x-forwarded-for', pick(r, ['1.2.3.4', '::1, 10.0.0.1', 'garbage', '1.2.3.4, 1.2.3.4'])],
        ['x-forwarded-host', 'evil.example'],
        ['accept-language', headerSafe(hostileString(r, { huge: 0 }))],
        ['content-type', pick(r, CONTENT_TYPES)],
      ] as [string, string][]),
    )
  }
  return out
}

/** A body for a JSON schema or a form, in a (possibly wrong) encoding. */
function body(r: Rand, schema: JsonSchema | undefined, fields: string[] | undefined, csrf: string) {
  const roll = r()
  if (roll < 0.04) return { type: 'application/json', text: deeplyNested(r, int(r, 10, 20_000)) }
  if (roll < 0.1) {
    return {
      type: pick(r, CONTENT_TYPES),
      text: pick(r, [
        '{"name":',
        '{name: 1}',
        "{'a': 1}",
        '\ufeff{}',
        '[1,]',
        'NaN',
        '',
        'null',
        '"x"',
        '{"a":1}x',
      ]),
    }
  }
  const value = fields
    ? Object.fromEntries(fields.filter(() => chance(r, 0.85)).map((f) => [f, hostileString(r)]))
    : fromSchema(r, schema)
  if (fields && chance(r, 0.85) && value && typeof value === 'object') {
    ;(value as Record<string, unknown>)._csrf = csrf
  }
  const asForm = fields ? chance(r, 0.8) : chance(r, 0.15)
  if (asForm && value && typeof value === 'object' && !Array.isArray(value)) {
    const form = new URLSearchParams()
    for (const [k, v] of Object.entries(value)) form.append(k, typeof v === 'string' ? v : JSON.stringify(v))
    if (chance(r, 0.2)) {
      const boundary = 'fuzz'
      const parts = [...form].map(
        ([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
      )
      return {
        type: `multipart/form-data; boundary=${boundary}`,
        text: `${parts.join('')}--${boundary}--\r\n`,
      }
    }
    return { type: 'application/x-www-form-urlencoded', text: form.toString() }
  }
  return {
    type: chance(r, 0.9) ? 'application/json' : pick(r, CONTENT_TYPES),
    text: JSON.stringify(value) ?? 'null',
  }
}

function controlPlaneCase(r: Rand, t: FuzzTargets): FuzzCase {
  const route = pick(r, t.routes)
  const method = chance(r, 0.05)
    ? pick(r, ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'POST'])
    : route.method
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'workspace_id'
      ? hostileId(r, chance(r, 0.85) ? t.ids.workspace : t.ids.foreignWorkspace)
      : hostileId(r, t.ids.app),
  )
  const query = new URLSearchParams()
  if (method === 'GET' && chance(r, 0.4)) {
    for (const key of pick(r, [['next'], ['code', 'state'], ['error', 'iss'], ['idp_hint'], ['x']])) {
      query.set(key, hostileString(r, { huge: 0.01 }))
    }
  }
  // Logging out with the real session would end the run's session: only bogus credentials there.
  const headers = authHeaders(r, t, route.path !== '/v1/auth/logout')
  headers.push(...noiseHeaders(r))
  const fields = FORM_FIELDS[`${route.method} ${route.path}`]
  const hasBody = !['GET', 'HEAD'].includes(method) && (route.body || fields || chance(r, 0.3))
  let text: string | undefined
  if (hasBody) {
    const b = body(r, route.body, fields, t.session.csrf)
    if (chance(r, 0.9)) headers.push(['content-type', b.type])
    text = b.text
  }
  const qs = query.size ? `?${query}` : ''
  return {
    route: `${route.method} ${route.path}`,
    method,
    url: `${t.baseUrl}${path}${qs}`,
    headers,
    body: text,
  }
}

function identityCase(r: Rand, t: FuzzTargets): FuzzCase {
  const instance = pick(r, t.instances)
  const instanceId = chance(r, 0.9) ? instance.id : hostileId(r, [])
  const [method, template] = pick(r, IDENTITY_PATHS)
  const path = template.replace('{uid}', chance(r, 0.5) ? 'AAAAAAAAAAAAAAAAAAAAA' : hostileId(r, []))
  const params = new URLSearchParams()
  if (template === '/auth' && chance(r, 0.6)) {
    params.set('client_id', instance.clientId)
    params.set('response_type', 'code')
    params.set('redirect_uri', chance(r, 0.7) ? instance.redirectUri : hostileString(r, { huge: 0 }))
    params.set(
      'scope',
      pick(r, ['openid', 'openid email profile offline_access', hostileString(r, { huge: 0 })]),
    )
  }
  for (let i = int(r, 0, 5); i > 0; i--)
    params.append(pick(r, IDENTITY_PARAMS), hostileString(r, { huge: 0.005 }))
  const headers: [string, string][] = [...noiseHeaders(r)]
  if (instance.cookie && chance(r, 0.4)) headers.push(['cookie', instance.cookie])
  else if (chance(r, 0.3)) headers.push(...authHeaders(r, t, false))
  const inBody = method === 'POST' && chance(r, 0.85)
  let text: string | undefined
  if (inBody) {
    text = chance(r, 0.85) ? params.toString() : JSON.stringify(anyValue(r))
    headers.push([
      'content-type',
      chance(r, 0.8) ? 'application/x-www-form-urlencoded' : pick(r, CONTENT_TYPES),
    ])
  }
  const qs = !inBody && params.size ? `?${params}` : ''
  const route = `${method} /i/{instance}${template}`
  return { route, method, url: `${t.baseUrl}/i/${instanceId}${path}${qs}`, headers, body: text }
}

/** The `count` cases of a run, all drawn from `seed` before any is sent. */
export function fuzzCases(t: FuzzTargets, seed: number, count: number): FuzzCase[] {
  const r = prng(seed)
  return Array.from({ length: count }, () => (chance(r, 0.65) ? controlPlaneCase(r, t) : identityCase(r, t)))
}
