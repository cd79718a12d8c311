import { Elysia, NotFoundError } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { TenantModel } from './model'
import { createTenantService, trimName } from './service'
import { createTenantInvitationService } from './service.invitations'
import { createTenantMemberService } from './service.members'

const tags = ['tenants']

/** Names are stored trimmed: trimmed before validation, so the length rule sees what is stored. */
const trimmed = {
  transform(ctx: { body: unknown }) {
    ctx.body = trimName(ctx.body)
  },
}

/**
 * SPEC's batch path, exactly: Elysia reads the colon of `/tenants:batch` as a parameter that would
 * match `/tenants<anything>`, and the batch rate limit counts this spelling only (not `%3A`, not a
 * trailing slash), so anything else is no route at all.
 */
const BATCH_PATH = /^\/v1\/workspaces\/[^/]+\/tenants:batch$/
const batchPathOnly = {
  transform: ({ request }: { request: Request }) => {
    if (!BATCH_PATH.test(new URL(request.url).pathname)) throw new NotFoundError()
  },
}

/** DESIGN "Tenants": a workspace's tenants, read and edited within the caller's tenant scopes. */
export function tenantRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createTenantService(core)
  return new Elysia({ name: 'tenant-routes', prefix: '/v1/workspaces/:workspace_id/tenants' })
    .use(auth)
    .get('/', ({ workspace, tenants, query }) => service.list(workspace, tenants, query), {
      params: WorkspaceModel.params,
      query: TenantModel.listQuery,
      tenantScope: 'read',
      response: TenantModel.list,
      detail: {
        tags,
        summary: 'List tenants (limit, cursor, q: slug or name prefix)',
        description: 'A caller holding tenant scopes only sees the tenants they name.',
      },
    })
    .post(
      '/',
      async ({ workspace, actor, body, set }) => {
        set.status = 201
        return service.create(workspace, actor, body)
      },
      {
        ...trimmed,
        params: WorkspaceModel.params,
        body: TenantModel.create,
        scope: 'workspace:write',
        response: { 201: TenantModel.out },
        detail: { tags, summary: 'Create a tenant (409 when the slug is taken in this workspace)' },
      },
    )
    .get(
      '/:tenant_id',
      ({ workspace, tenants, params }) => service.get(workspace, tenants, params.tenant_id),
      {
        params: TenantModel.params,
        tenantScope: 'read',
        response: TenantModel.out,
        detail: { tags, summary: 'Get a tenant' },
      },
    )
    .patch(
      '/:tenant_id',
      ({ workspace, actor, tenants, params, body }) =>
        service.update(workspace, actor, tenants, params.tenant_id, body),
      {
        ...trimmed,
        params: TenantModel.params,
        body: TenantModel.update,
        tenantScope: 'write',
        response: TenantModel.out,
        detail: { tags, summary: "Change a tenant's name or metadata (the slug never changes)" },
      },
    )
    .delete(
      '/:tenant_id',
      async ({ workspace, actor, params }) => {
        await service.remove(workspace, actor, params.tenant_id)
        return { deleted: true as const }
      },
      {
        params: TenantModel.params,
        scope: 'workspace:write',
        response: TenantModel.deleted,
        detail: { tags, summary: 'Delete a tenant and its memberships (idempotent)' },
      },
    )
}

/** A tenant's members: users of the workspace's identity instance. */
export function tenantMemberRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createTenantMemberService(core)
  const invitations = createTenantInvitationService(core)
  return new Elysia({
    name: 'tenant-member-routes',
    prefix: '/v1/workspaces/:workspace_id/tenants/:tenant_id/members',
  })
    .use(auth)
    .get(
      '/',
      ({ workspace, tenants, params, query }) => service.list(workspace, tenants, params.tenant_id, query),
      {
        params: TenantModel.params,
        query: TenantModel.membersQuery,
        tenantScope: 'read',
        response: TenantModel.members,
        detail: { tags, summary: "List a tenant's members (limit, cursor)" },
      },
    )
    .post(
      '/',
      async ({ workspace, actor, tenants, params, body, set }) => {
        set.status = 201
        return service.add(workspace, actor, tenants, params.tenant_id, body.user_id)
      },
      {
        params: TenantModel.params,
        body: TenantModel.addMember,
        tenantScope: 'write',
        response: { 201: TenantModel.member },
        detail: {
          tags,
          summary: 'Add a user of the workspace to a tenant (404 for an unknown user, 409 for a member)',
          description:
            'Takes `workspace:write`. A tenant key (`tenant:<slug>:write`) reaches its tenant and its ' +
            'members only: for it, any `user_id` that is not a member is 403, the same whether the ' +
            'workspace has that user or not; it invites by email (`POST …/members/invite`).',
        },
      },
    )
    .post(
      '/invite',
      async ({ workspace, actor, tenants, params, body, set }) => {
        set.status = 202
        return invitations.invite(workspace, actor, tenants, params.tenant_id, body)
      },
      {
        params: TenantModel.params,
        body: TenantModel.invite,
        tenantScope: 'write',
        response: { 202: TenantModel.invited },
        detail: {
          tags,
          summary: 'Invite an address to a tenant: its user joins at their next sign-in (409 for a member)',
          description:
            'How a tenant key brings in someone it cannot see. The answer is the same 202 whether the ' +
            'workspace has a user with the address or not. A user it has is mailed to sign in; anyone ' +
            "else gets the workspace's invitation (as `POST …/users/invite`), naming the tenant. The " +
            'account joins at its next sign-in within 7 days, once its address is proved.',
        },
      },
    )
    .get(
      '/:user_id',
      ({ workspace, tenants, params }) => service.get(workspace, tenants, params.tenant_id, params.user_id),
      {
        params: TenantModel.memberParams,
        tenantScope: 'read',
        response: TenantModel.member,
        detail: { tags, summary: 'Get a member of a tenant' },
      },
    )
    .delete(
      '/:user_id',
      async ({ workspace, actor, tenants, params }) => {
        await service.remove(workspace, actor, tenants, params.tenant_id, params.user_id)
        return { deleted: true as const }
      },
      {
        params: TenantModel.memberParams,
        tenantScope: 'write',
        response: TenantModel.deleted,
        detail: { tags, summary: 'Remove a member from a tenant (idempotent)' },
      },
    )
}

/** `POST …/tenants:batch` (SPEC "Batch API"): its own rate limit, 5 batches a minute per workspace. */
export function tenantBatchRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createTenantService(core)
  return new Elysia({ name: 'tenant-batch-routes', prefix: '/v1/workspaces/:workspace_id' })
    .use(auth)
    .post('/tenants:batch', ({ workspace, actor, body }) => service.createMany(workspace, actor, body), {
      ...batchPathOnly,
      params: TenantModel.batchParams,
      body: TenantModel.batch,
      scope: 'workspace:write',
      response: TenantModel.batchResult,
      detail: {
        tags,
        summary: 'Create up to 100 tenants; each item succeeds or fails on its own',
        description:
          'Answers 200 with one result per item, in order: `{index, status: "created", tenant}` or ' +
          '`{index, status: "error", error: {type, msg, loc}}` (a rule the item breaks, a slug the workspace ' +
          'has, or one an earlier item has), and the `created` and `failed` counts. 0 or more than 100 items ' +
          'is a 422. Limited to 5 batches a minute per workspace, apart from the control-plane limit.',
      },
    })
}
