import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import type { Workspace } from '../workspaces/service'
import { LoginPolicyModel } from './model'
import { createLoginPolicyService } from './service'

const tags = ['login-policy']

/** SPEC "Login policy, IdPs, users": the workspace's login policy. */
export function loginPolicyRoutes(core: Core, auth: AuthPlugin<Workspace>) {
  const service = createLoginPolicyService(core)
  return new Elysia({ name: 'login-policy-routes', prefix: '/v1/workspaces/:workspace_id/login-policy' })
    .use(auth)
    .get('/', ({ workspace }) => service.get(workspace), {
      params: LoginPolicyModel.params,
      scope: 'workspace:read',
      response: LoginPolicyModel.view,
      detail: { tags, summary: 'Get the login policy' },
    })
    .patch('/', ({ workspace, actor, body }) => service.update(workspace, actor, body), {
      params: LoginPolicyModel.params,
      body: LoginPolicyModel.update,
      // Security settings (MFA, lockout, verification): an administrator's, not a developer's.
      scope: 'workspace:admin',
      response: LoginPolicyModel.view,
      detail: {
        tags,
        summary: 'Change the login policy (omitted fields keep their value); the hosted pages follow at once',
      },
    })
}
