import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { createKeyExchange, ExchangeErrors, JWT_BEARER } from './exchange'
import { MachineKeyModel } from './model'
import { createMachineKeyService } from './service'

const tags = ['machine-keys']

/** RFC 6749 §5.1: token responses are never cached. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }
const EXCHANGE_CODES = new Set<string>(Object.values(ExchangeErrors).map((e) => e.code))

/** DESIGN "Machine keys": create, list, read, rotate and revoke a workspace's keys. */
export function machineKeyRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createMachineKeyService(core)
  return new Elysia({ name: 'machine-key-routes', prefix: '/v1/workspaces/:workspace_id/machine-keys' })
    .use(auth)
    .get(
      '/',
      async ({ workspace }) => {
        const items = await service.list(workspace)
        return { items, total: items.length }
      },
      {
        params: WorkspaceModel.params,
        scope: 'workspace:read',
        response: MachineKeyModel.list,
        detail: {
          tags,
          summary:
            'List machine keys (keys.list): active, rotating and expired, newest first; never a secret',
        },
      },
    )
    .post(
      '/',
      async ({ workspace, principal, actor, scopes, body, set }) => {
        set.status = 201
        set.headers['cache-control'] = 'no-store'
        return service.create(workspace, { principal, actor, scopes }, body)
      },
      {
        params: WorkspaceModel.params,
        body: MachineKeyModel.create,
        scope: 'workspace:admin',
        response: { 201: MachineKeyModel.created },
        detail: {
          tags,
          summary: 'Create a machine key; its `key` object (the key file) is shown this once',
          description:
            'The `key` object is the key file: keep it as JSON and point `SERVICE_MACHINE_KEY_PATH` at it. ' +
            'Only the public key is stored. Each scope must be held by the caller (422 otherwise), and a key ' +
            'created by a key expires no later than its creator.',
        },
      },
    )
    .get('/:key_id', ({ workspace, params }) => service.get(workspace, params.key_id), {
      params: MachineKeyModel.params,
      scope: 'workspace:read',
      response: MachineKeyModel.out,
      detail: { tags, summary: 'Get a machine key (never its secret)' },
    })
    .post(
      '/:key_id/rotate',
      async ({ workspace, principal, actor, scopes, params, set }) => {
        set.status = 201
        set.headers['cache-control'] = 'no-store'
        return service.rotate(workspace, { principal, actor, scopes }, params.key_id)
      },
      {
        params: MachineKeyModel.params,
        scope: 'workspace:admin',
        response: { 201: MachineKeyModel.created },
        detail: {
          tags,
          summary:
            'Rotate a key: a new key with the same name, scopes and expiry; the old one works 24 h more',
          description:
            'The new key file is shown this once. The old key is `rotating` until `revokes_at`, then revoked ' +
            'by a background job. 409 for a key rotated already or expired.',
        },
      },
    )
    .delete(
      '/:key_id',
      async ({ workspace, principal, actor, scopes, params }) => {
        await service.revoke(workspace, { principal, actor, scopes }, params.key_id)
        return { deleted: true as const }
      },
      {
        params: MachineKeyModel.params,
        scope: 'workspace:admin',
        response: MachineKeyModel.deleted,
        detail: {
          tags,
          summary: 'Revoke a key at once (idempotent); tokens it issued end within their 15 minutes',
        },
      },
    )
}

/**
 * `POST /v1/auth/token`: the jwt-bearer exchange (RFC 7523 §2.1). Its refusals are RFC 6749 §5.2's
 * shape, `{"error", "error_description"}` with 400, which OAuth client libraries parse.
 */
export function tokenExchangeRoutes(core: Core) {
  const exchange = createKeyExchange(core)
  return new Elysia({ name: 'token-exchange-routes' }).post(
    '/v1/auth/token',
    async ({ request, body, set, status }) => {
      Object.assign(set.headers, NO_STORE)
      try {
        // RFC 6749 §3.2: the token endpoint takes application/x-www-form-urlencoded.
        const type = request.headers.get('content-type') ?? ''
        if (!type.startsWith('application/x-www-form-urlencoded') || !body || typeof body !== 'object')
          throw new AppError(
            ExchangeErrors.INVALID_REQUEST.code,
            400,
            'Send the parameters as application/x-www-form-urlencoded',
          )
        return await exchange(body as Record<string, unknown>)
      } catch (e) {
        if (!(e instanceof AppError) || !EXCHANGE_CODES.has(e.code)) throw e
        return status(400, { error: e.code.toLowerCase(), error_description: e.message })
      }
    },
    {
      response: { 200: MachineKeyModel.token, 400: MachineKeyModel.tokenError },
      detail: {
        tags,
        summary: 'Exchange a machine key assertion for a 15-minute access token (RFC 7523 jwt-bearer)',
        description:
          `Form-encoded: \`grant_type=${JWT_BEARER}\`, \`assertion\` (a JWT signed with the key: header ` +
          '`alg` ES256, `kid` = key_id; claims `iss` = `sub` = key_id, `aud` = the key file `token_url`, ' +
          '`iat`, `exp` at most 1 h after `iat`, a single-use `jti`), and optionally `scope`, a ' +
          'space-separated subset of the key scopes. Refusals are RFC 6749 §5.2 bodies with 400: ' +
          '`invalid_grant` says whether the key was revoked, rotated out or expired, or what in the ' +
          'assertion failed.',
      },
    },
  )
}
