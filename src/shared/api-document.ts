import type { RateLimits } from '../config'

/**
 * What a reader looks for first, in the order they need it: signing in, the workspace, what lives in
 * it, then its settings, automation, the record of what happened and the bill. The dashboard's own
 * pages (HTML, session only) close the list.
 */
export const API_TAGS = [
  {
    name: 'auth',
    description: 'Signing in: the dashboard login, the device flow for tools, who is calling.',
  },
  { name: 'workspaces', description: 'Your workspaces and their identity instances.' },
  { name: 'members', description: 'Who may manage a workspace, and with which role.' },
  { name: 'apps', description: 'OIDC applications that sign users in through the workspace.' },
  { name: 'users', description: "The workspace's end users and their invitations." },
  { name: 'tenants', description: "The workspace's customers and their members; batch creation." },
  { name: 'login-policy', description: 'How users sign in: passwords, registration, MFA, lockout.' },
  { name: 'idps', description: 'External identity providers (Google, GitHub, Microsoft, any OIDC).' },
  { name: 'branding', description: 'Name, colours and logo of the hosted pages and mails.' },
  { name: 'smtp', description: "The mail server the workspace's mails go through." },
  { name: 'machine-keys', description: 'Keys for agents and automation, and their exchange for a token.' },
  { name: 'webhooks', description: 'Signed events posted to your endpoints, and their deliveries.' },
  { name: 'audit-log', description: 'Who changed what, when and from where.' },
  { name: 'billing', description: 'Plan, checkout, spending cap, and the payment provider’s events.' },
  { name: 'health', description: 'Liveness for load balancers and orchestrators.' },
  { name: 'views', description: 'The dashboard’s HTML pages and forms (a browser session only).' },
]

/** The schemes a caller may use: a bearer token, or the dashboard's session with its CSRF header. */
export const securitySchemes = (sessionCookie: string) => ({
  bearer: {
    type: 'http' as const,
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      "A person's token from the device flow, or a machine key's 15-minute token from `POST /v1/auth/token`.",
  },
  session: {
    type: 'apiKey' as const,
    in: 'cookie' as const,
    name: sessionCookie,
    description: 'The dashboard session, set by signing in at `/v1/auth/login`; the browser sends it.',
  },
  csrf: {
    type: 'apiKey' as const,
    in: 'header' as const,
    name: 'X-CSRF-Token',
    description: 'Required with the session on every write: the `csrf_token` of `GET /v1/auth/me`.',
  },
})

/** How to call the API, its errors and its limits: what the reference opens with. */
export const apiDescription = (limits: RateLimits) => `Control plane of the Gatehouse authentication platform.

## Authentication

Every \`/v1\` route needs a caller except signing in (\`/v1/auth/login\`, the device flow), the token
exchange (\`POST /v1/auth/token\`) and the payment provider's webhook. Each operation lists what it accepts.

- **Bearer token**: send \`Authorization: Bearer <access token>\`. A person gets one through the device
  flow (\`POST /v1/auth/device/start\`, then \`POST /v1/auth/device/poll\`). A machine key is exchanged
  for a 15-minute token at \`POST /v1/auth/token\` (RFC 7523 jwt-bearer grant); it acts on its own
  workspace only, within its scopes.
- **Session cookie**: signed in to the dashboard, the browser sends the session cookie itself. Every
  write (POST, PUT, PATCH, DELETE) must also carry the session's CSRF token in \`X-CSRF-Token\`, which
  \`GET /v1/auth/me\` answers as \`csrf_token\`.

Scopes nest: \`workspace:read\` ⊂ \`workspace:write\` ⊂ \`workspace:admin\`. A member's role gives one
(viewer: read, developer: write, owner and admin: admin); a machine key holds those it was given, or
\`tenant:<slug>:read\` / \`tenant:<slug>:write\` for one tenant. Each operation names the scope it needs.

## Errors

Errors are JSON: \`{"detail": "<what went wrong>"}\`.

| Status | Meaning |
|---|---|
| 400 | a payment-provider event with a missing or wrong signature |
| 401 | no credentials, or they failed (\`WWW-Authenticate: Bearer\`) |
| 403 | the caller lacks the scope, or a session write lacks its CSRF token |
| 404 | no such resource, or a workspace the caller cannot see |
| 409 | the request conflicts with the current state (e.g. the last owner, billing not configured) |
| 422 | validation: \`{"detail": [{"loc": ["body", "name"], "msg": "…", "type": "…"}]}\` |
| 429 | a rate limit is exhausted; wait \`Retry-After\` seconds |

\`POST /v1/auth/token\` answers as OAuth clients expect (RFC 6749 §5.2): \`{"error": "invalid_grant",
"error_description": "…"}\`.

## Rate limits

| Scope | Limit |
|---|---|
| per workspace (every \`/v1/workspaces/{id}/…\` call) | ${limits.workspacePerMinute} requests per minute |
| per organisation (the owning account's workspaces together) | ${limits.organisationPerMinute} requests per minute |
| per client address (unauthenticated \`/v1/auth/*\`) | ${limits.addressPerMinute} requests per minute |
| batch (\`POST …/tenants:batch\`), apart from the above | ${limits.batchPerMinute} batches per minute per workspace |

Every control-plane answer carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (a unix time) of the tightest bucket. A 429 carries \`Retry-After\` (seconds): back
off exponentially from 1 s (1, 2, 4, 8 s, at most 30 s) with ±20% jitter. Not limited: \`/healthz\`,
OIDC discovery and JWKS, static assets and \`/v1/webhooks/payments\`.
`
