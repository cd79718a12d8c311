import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import type { Core } from '../../core'
import { defineForm, formField } from '../../shared/forms'
import type { SidebarLink } from '../../shared/views/components'
import { settingsPage } from '../../shared/views/crud'
import { mailLeaves } from '../mail/service'
import type { Workspace } from '../workspaces/service'
import { LoginPolicyModel } from './model'
import { createLoginPolicyService } from './service'
import { LoginPolicyForm, policyValues } from './views'

const views = { detail: { tags: ['views'] } }
const params = LoginPolicyModel.params

/**
 * The dashboard saves the whole policy: the form reads into LoginPolicyView (every field required),
 * an unticked checkbox (never sent) is false, and the rules and messages are the API's.
 */
const policyForm = defineForm(LoginPolicyModel.view, {
  allow_password: formField.checkbox,
  allow_registration: formField.checkbox,
  allow_external_idps: formField.checkbox,
  require_email_verification: formField.checkbox,
  mfa: formField.choice,
  password_min_length: formField.integer,
  lockout_threshold: formField.integer,
  lockout_minutes: formField.integer,
  session_lifetime_hours: formField.integer,
})

/** Dashboard: settings/login-policy (SPEC "Dashboard routes"). */
export function loginPolicyPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createLoginPolicyService(core)
  const path = '/app/workspaces/:workspace_id/settings/login-policy'

  const settings = settingsPage({
    nav: sidebar,
    here: 'settings/login-policy',
    heading: 'Login policy',
    title: 'login policy',
    lead: "How users sign in to this workspace's apps.",
  })
  const panel = (form: JSX.Element) => <div class="panel">{form}</div>

  return new Elysia({ name: 'login-policy-pages' })
    .use(auth)
    .get(
      path,
      settings.get(async (w: Workspace) =>
        panel(
          <LoginPolicyForm
            workspaceId={w.id}
            values={policyValues(await service.get(w))}
            mailLeaves={await mailLeaves(core, w.id)}
          />,
        ),
      ),
      { params, scope: 'workspace:read', ...views },
    )
    .post(
      path,
      async ({ principal, actor, workspace: w, body, request }) => {
        const saved = await policyForm.submit(body, (input) => service.update(w, actor, input))
        const leaves = await mailLeaves(core, w.id)
        const form = saved.ok ? (
          <LoginPolicyForm workspaceId={w.id} values={policyValues(saved.result)} saved mailLeaves={leaves} />
        ) : (
          <LoginPolicyForm
            workspaceId={w.id}
            values={saved.values}
            errors={saved.errors}
            mailLeaves={leaves}
          />
        )
        // htmx swaps the form in place; a browser without script gets the whole page again.
        const hx = request.headers.get('hx-request') === 'true'
        return settings.answer(saved.ok, hx ? form : settings.page(principal, w, panel(form)))
      },
      { params, scope: 'workspace:admin', ...views },
    )
}
