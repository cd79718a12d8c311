import type { TObject } from '@sinclair/typebox'
import type { WorkspaceScope } from '../../access/scopes'
import { AppModel } from '../../features/apps/model'
import { AuditModel } from '../../features/audit/model'
import { BrandingModel } from '../../features/branding/model'
import { IdpModel } from '../../features/idps/model'
import { LoginPolicyModel } from '../../features/login-policy/model'
import { MachineKeyModel } from '../../features/machine-keys/model'
import { TenantModel } from '../../features/tenants/model'
import { UserModel } from '../../features/users/model'
import { WebhookModel } from '../../features/webhooks/model'
import { MemberModel, WorkspaceModel } from '../../features/workspaces/model'

/**
 * What a tool asks of the key, as its route asks it (`scope` or `tenantScope` in the feature's
 * routes.ts): a workspace scope, or a tenant level that `tenant:<slug>:<level>` also grants.
 */
export type Need = WorkspaceScope | { tenant: 'read' | 'write' }

/** read: changes nothing; write: creates or changes; destructive: deletes or revokes. */
export type Effect = 'read' | 'create' | 'update' | 'destructive'

/**
 * One tool: a control-plane route, its input built from that route's own TypeBox models (path
 * parameters, query and body), never written a second time here.
 */
export interface ToolSpec {
  name: string
  description: string
  needs: Need
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  /** The route, `{name}` standing for a path parameter. */
  path: string
  /** The route's `params` model (workspace_id and any resource id). */
  params: TObject
  query?: TObject
  /** Query fields the tool leaves out (the audit log's CSV `format`). */
  omitQuery?: string[]
  body?: TObject
  effect: Effect
  /** What one item is called in the text summary. */
  noun: string
}

const ws = '/v1/workspaces/{workspace_id}'
const workspace = WorkspaceModel.params

/**
 * The control plane as tools. Each says the scope its route takes, so the list an agent sees is
 * what its key may do: a tool it could not call is not shown.
 */
export const TOOLS: ToolSpec[] = [
  // workspace:read
  {
    name: 'get_workspace',
    description: 'The workspace of this key: name, state, plan and the issuer URL of its identity instance.',
    needs: 'workspace:read',
    method: 'GET',
    path: ws,
    params: workspace,
    effect: 'read',
    noun: 'workspace',
  },
  {
    name: 'list_apps',
    description: 'The OIDC applications of the workspace (never their secrets).',
    needs: 'workspace:read',
    method: 'GET',
    path: `${ws}/apps`,
    params: workspace,
    effect: 'read',
    noun: 'app',
  },
  {
    name: 'get_app',
    description:
      'One OIDC application: its client_id, type, redirect URIs and development mode (never its secret).',
    needs: 'workspace:read',
    method: 'GET',
    path: `${ws}/apps/{app_id}`,
    params: AppModel.params,
    effect: 'read',
    noun: 'app',
  },
  {
    name: 'get_login_policy',
    description:
      'How users sign in: password, registration, external IdPs, email verification, MFA, lockout.',
    needs: 'workspace:read',
    method: 'GET',
    path: `${ws}/login-policy`,
    params: workspace,
    effect: 'read',
    noun: 'login policy',
  },
  {
    name: 'list_idps',
    description: 'The external identity providers users may sign in with (never their secrets).',
    needs: 'workspace:read',
    method: 'GET',
    path: `${ws}/idps`,
    params: workspace,
    effect: 'read',
    noun: 'identity provider',
  },
  {
    name: 'list_users',
    description:
      "The users of the workspace's identity instance, newest first; `q` searches by email or name prefix.",
    needs: 'workspace:read',
    method: 'GET',
    path: `${ws}/users`,
    params: workspace,
    query: UserModel.listQuery,
    effect: 'read',
    noun: 'user',
  },
  {
    name: 'list_members',
    description: 'The people who administer the workspace (members and pending invitations) and their roles.',
    needs: 'workspace:read',
    method: 'GET',
    path: `${ws}/members`,
    params: workspace,
    effect: 'read',
    noun: 'member',
  },
  {
    name: 'list_machine_keys',
    description: 'The machine keys of the workspace with their scopes and status (never a secret).',
    needs: 'workspace:read',
    method: 'GET',
    path: `${ws}/machine-keys`,
    params: workspace,
    effect: 'read',
    noun: 'machine key',
  },
  {
    name: 'get_branding',
    description: 'The look of the hosted sign-in pages and mails: display name, colours, links, logo.',
    needs: 'workspace:read',
    method: 'GET',
    path: `${ws}/branding`,
    params: workspace,
    effect: 'read',
    noun: 'branding',
  },
  // Tenant tools: a tenant key (`tenant:<slug>:read|write`) reaches its own tenant through them.
  {
    name: 'list_tenants',
    description: "The workspace's tenants (customer organisations); a tenant key sees its own only.",
    needs: { tenant: 'read' },
    method: 'GET',
    path: `${ws}/tenants`,
    params: workspace,
    query: TenantModel.listQuery,
    effect: 'read',
    noun: 'tenant',
  },
  {
    name: 'get_tenant',
    description: 'One tenant: slug, name and metadata.',
    needs: { tenant: 'read' },
    method: 'GET',
    path: `${ws}/tenants/{tenant_id}`,
    params: TenantModel.params,
    effect: 'read',
    noun: 'tenant',
  },
  {
    name: 'list_tenant_members',
    description: "A tenant's members (users of the workspace).",
    needs: { tenant: 'read' },
    method: 'GET',
    path: `${ws}/tenants/{tenant_id}/members`,
    params: TenantModel.params,
    query: TenantModel.membersQuery,
    effect: 'read',
    noun: 'tenant member',
  },
  {
    name: 'update_tenant',
    description: "Change a tenant's name or metadata (its slug never changes).",
    needs: { tenant: 'write' },
    method: 'PATCH',
    path: `${ws}/tenants/{tenant_id}`,
    params: TenantModel.params,
    body: TenantModel.update,
    effect: 'update',
    noun: 'tenant',
  },
  {
    name: 'invite_tenant_member',
    description: 'Invite an email address to a tenant: its user joins at their next sign-in.',
    needs: { tenant: 'write' },
    method: 'POST',
    path: `${ws}/tenants/{tenant_id}/members/invite`,
    params: TenantModel.params,
    body: TenantModel.invite,
    effect: 'create',
    noun: 'invitation',
  },
  {
    name: 'remove_tenant_member',
    description: 'Remove a user from a tenant (idempotent); the user stays in the workspace.',
    needs: { tenant: 'write' },
    method: 'DELETE',
    path: `${ws}/tenants/{tenant_id}/members/{user_id}`,
    params: TenantModel.memberParams,
    effect: 'destructive',
    noun: 'tenant member',
  },
  // workspace:write
  {
    name: 'update_workspace',
    description: "Rename the workspace, or (Pro and above) set its identity plane's requests per second.",
    needs: 'workspace:write',
    method: 'PATCH',
    path: ws,
    params: workspace,
    body: WorkspaceModel.update,
    effect: 'update',
    noun: 'workspace',
  },
  {
    name: 'create_app',
    description:
      'Register an OIDC application. A `web` app gets a client_secret, shown in this answer only; `spa` and `native` use PKCE.',
    needs: 'workspace:write',
    method: 'POST',
    path: `${ws}/apps`,
    params: workspace,
    body: AppModel.create,
    effect: 'create',
    noun: 'app',
  },
  {
    name: 'update_app',
    description:
      "Change an application's name, redirect URIs, post-logout redirect URIs or development mode (AppCreate's rules; the type cannot change). A removed redirect URI is refused at once.",
    needs: 'workspace:write',
    method: 'PATCH',
    path: `${ws}/apps/{app_id}`,
    params: AppModel.params,
    body: AppModel.update,
    effect: 'update',
    noun: 'app',
  },
  {
    name: 'delete_app',
    description: 'Delete an application (idempotent); its tokens stop working.',
    needs: 'workspace:write',
    method: 'DELETE',
    path: `${ws}/apps/{app_id}`,
    params: AppModel.params,
    effect: 'destructive',
    noun: 'app',
  },
  {
    name: 'create_idp',
    description:
      'Add an external identity provider (Google, GitHub, Microsoft or any OIDC issuer) to the sign-in page.',
    needs: 'workspace:write',
    method: 'POST',
    path: `${ws}/idps`,
    params: workspace,
    body: IdpModel.create,
    effect: 'create',
    noun: 'identity provider',
  },
  {
    name: 'delete_idp',
    description: 'Remove an external identity provider from the sign-in page and delete it (idempotent).',
    needs: 'workspace:write',
    method: 'DELETE',
    path: `${ws}/idps/{idp_id}`,
    params: IdpModel.params,
    effect: 'destructive',
    noun: 'identity provider',
  },
  {
    name: 'invite_user',
    description:
      'Invite a user by email: a single-use link valid 7 days (an address already known is refused).',
    needs: 'workspace:write',
    method: 'POST',
    path: `${ws}/users/invite`,
    params: workspace,
    body: UserModel.invite,
    effect: 'create',
    noun: 'invitation',
  },
  {
    name: 'delete_user',
    description: 'Delete a user (idempotent): their sessions and tokens end at once.',
    needs: 'workspace:write',
    method: 'DELETE',
    path: `${ws}/users/{user_id}`,
    params: UserModel.params,
    effect: 'destructive',
    noun: 'user',
  },
  {
    name: 'update_branding',
    description:
      'Change the display name, colours or policy links of the hosted pages (null clears a field).',
    needs: 'workspace:write',
    method: 'PATCH',
    path: `${ws}/branding`,
    params: workspace,
    body: BrandingModel.update,
    effect: 'update',
    noun: 'branding',
  },
  {
    name: 'create_tenant',
    description: 'Create a tenant (a customer organisation) with a slug unique in the workspace.',
    needs: 'workspace:write',
    method: 'POST',
    path: `${ws}/tenants`,
    params: workspace,
    body: TenantModel.create,
    effect: 'create',
    noun: 'tenant',
  },
  {
    name: 'delete_tenant',
    description: 'Delete a tenant and its memberships (idempotent).',
    needs: 'workspace:write',
    method: 'DELETE',
    path: `${ws}/tenants/{tenant_id}`,
    params: TenantModel.params,
    effect: 'destructive',
    noun: 'tenant',
  },
  {
    name: 'add_tenant_member',
    description: 'Add a user of the workspace to a tenant by user id.',
    needs: 'workspace:write',
    method: 'POST',
    path: `${ws}/tenants/{tenant_id}/members`,
    params: TenantModel.params,
    body: TenantModel.addMember,
    effect: 'create',
    noun: 'tenant member',
  },
  {
    name: 'list_webhooks',
    description: 'The webhook endpoints of the workspace and their status (never their secrets).',
    needs: 'workspace:write',
    method: 'GET',
    path: `${ws}/webhooks`,
    params: workspace,
    effect: 'read',
    noun: 'webhook',
  },
  {
    name: 'create_webhook',
    description: 'Subscribe an https endpoint to events; the signing secret is in this answer only.',
    needs: 'workspace:write',
    method: 'POST',
    path: `${ws}/webhooks`,
    params: workspace,
    body: WebhookModel.create,
    effect: 'create',
    noun: 'webhook',
  },
  {
    name: 'update_webhook',
    description: "Change a webhook endpoint's URL, events or description, or enable/disable it.",
    needs: 'workspace:write',
    method: 'PATCH',
    path: `${ws}/webhooks/{webhook_id}`,
    params: WebhookModel.params,
    body: WebhookModel.update,
    effect: 'update',
    noun: 'webhook',
  },
  {
    name: 'delete_webhook',
    description: 'Delete a webhook endpoint and its deliveries (idempotent).',
    needs: 'workspace:write',
    method: 'DELETE',
    path: `${ws}/webhooks/{webhook_id}`,
    params: WebhookModel.params,
    effect: 'destructive',
    noun: 'webhook',
  },
  {
    name: 'list_webhook_deliveries',
    description: "An endpoint's deliveries, newest first, with their status and last error.",
    needs: 'workspace:write',
    method: 'GET',
    path: `${ws}/webhooks/{webhook_id}/deliveries`,
    params: WebhookModel.params,
    query: WebhookModel.deliveriesQuery,
    effect: 'read',
    noun: 'delivery',
  },
  // workspace:admin
  {
    name: 'update_login_policy',
    description:
      'Change the login policy (omitted fields keep their value); the hosted pages follow at once.',
    needs: 'workspace:admin',
    method: 'PATCH',
    path: `${ws}/login-policy`,
    params: workspace,
    body: LoginPolicyModel.update,
    effect: 'update',
    noun: 'login policy',
  },
  {
    name: 'list_audit_log',
    description:
      'Who did what, newest first: filter by actor (`user:<id>`, `key:<id>`), action (`app.*`), since and until.',
    needs: 'workspace:admin',
    method: 'GET',
    path: `${ws}/audit-log`,
    params: AuditModel.params,
    query: AuditModel.listQuery,
    omitQuery: ['format'],
    effect: 'read',
    noun: 'audit entry',
  },
  {
    name: 'add_member',
    description:
      'Add a person to the workspace with a role; an address without an account is invited by mail.',
    needs: 'workspace:admin',
    method: 'POST',
    path: `${ws}/members`,
    params: workspace,
    body: MemberModel.add,
    effect: 'create',
    noun: 'member',
  },
  {
    name: 'remove_member',
    description: 'Remove a person from the workspace (idempotent); their access ends at once.',
    needs: 'workspace:admin',
    method: 'DELETE',
    path: `${ws}/members/{account_id}`,
    params: MemberModel.params,
    effect: 'destructive',
    noun: 'member',
  },
  {
    name: 'create_machine_key',
    description:
      'Create a machine key with scopes no wider than this key holds; the answer carries its key file, shown once.',
    needs: 'workspace:admin',
    method: 'POST',
    path: `${ws}/machine-keys`,
    params: workspace,
    body: MachineKeyModel.create,
    effect: 'create',
    noun: 'machine key',
  },
  {
    name: 'revoke_machine_key',
    description: 'Revoke a machine key at once (idempotent); tokens it issued end within their 15 minutes.',
    needs: 'workspace:admin',
    method: 'DELETE',
    path: `${ws}/machine-keys/{key_id}`,
    params: MachineKeyModel.params,
    effect: 'destructive',
    noun: 'machine key',
  },
]
