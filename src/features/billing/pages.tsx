import { Elysia } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { defineForm, type FormField, formField } from '../../shared/forms'
import { type SidebarLink, WorkspacePage } from '../../shared/views/components'
import { html, navigate, shellUser } from '../../shared/views/respond'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { accountOf } from './account'
import { BillingModel } from './model'
import { createBillingService } from './service'
import { BillingNotConfigured, billingPath, PlanActions, PlanPanel, SpendingCapForm } from './views'

const views = { detail: { tags: ['views'] } }
const noStore = { 'cache-control': 'no-store' }
const admin = 'workspace:admin' as const

/** Empty: no cap (null); digits: cents; anything else is left for the model to refuse. */
const capField: FormField = { read: (raw) => (raw.trim() === '' ? null : formField.integer.read(raw)) }
const capForm = defineForm(BillingModel.spendingCap, { spending_cap_cents: capField })
const planForm = defineForm(BillingModel.schedule, { plan: formField.choice })

/**
 * The billing page (SPEC "Dashboard routes"): the plan and this month's usage for every member;
 * checkout and the portal answer 200 with `HX-Redirect` to Stripe's hosted pages; scheduling and
 * releasing a downgrade reload the page (its banner says what is scheduled); the cap form redraws
 * itself. Every change takes workspace:admin, as on the API.
 */
export function billingPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const service = createBillingService(core)
  const path = '/app/workspaces/:workspace_id/billing'
  const params = WorkspaceModel.params

  const capValue = (cents: number | null) => ({ spending_cap_cents: cents === null ? '' : String(cents) })

  return new Elysia({ name: 'billing-pages' })
    .use(auth)
    .get(
      path,
      async ({ principal, scopes, workspace: w }) => {
        const mayChange = holdsScope(scopes, admin)
        let body: JSX.Element = <BillingNotConfigured />
        if (core.config.billing.stripe) {
          const state = await service.state(w)
          const usage = await service.meter.monthUsage(w.id, state.plan)
          const hasCustomer = Boolean((await accountOf(core, w.id))?.customerId)
          body = (
            <>
              <PlanPanel workspaceId={w.id} state={state} usage={usage} admin={mayChange} />
              {mayChange ? (
                <>
                  <PlanActions workspaceId={w.id} state={state} hasCustomer={hasCustomer} />
                  <SpendingCapForm workspaceId={w.id} values={capValue(state.spending_cap_cents)} />
                </>
              ) : (
                <p class="hint">Only owners and admins change the plan.</p>
              )}
            </>
          )
        }
        return html(
          <WorkspacePage
            nav={sidebar}
            here="billing"
            w={w}
            user={shellUser(principal)}
            heading="Billing"
            title="billing"
          >
            {body}
          </WorkspacePage>,
          200,
          noStore,
        )
      },
      { params, scope: 'workspace:read', ...views },
    )
    .post(
      `${path}/checkout`,
      async ({ request, workspace: w, actor, body }) => {
        const sent = await planForm.submit(body, (input) => service.checkout(w, actor, input.plan))
        if (!sent.ok) return html(<p class="field-error">Choose a plan.</p>, 422, noStore)
        return navigate(request, sent.result.url)
      },
      { params, scope: admin, ...views },
    )
    .post(
      `${path}/portal`,
      async ({ request, workspace: w, actor }) => navigate(request, (await service.portal(w, actor)).url),
      { params, scope: admin, ...views },
    )
    .post(
      `${path}/schedule-plan-change`,
      async ({ request, workspace: w, actor, body }) => {
        const sent = await planForm.submit(body, (input) => service.schedule(w, actor, input.plan))
        if (!sent.ok) return html(<p class="field-error">Choose a plan.</p>, 422, noStore)
        return navigate(request, billingPath(w.id))
      },
      { params, scope: admin, ...views },
    )
    .post(
      `${path}/schedule-plan-change/release`,
      async ({ request, workspace: w, actor }) => {
        await service.release(w, actor)
        return navigate(request, billingPath(w.id))
      },
      { params, scope: admin, ...views },
    )
    .post(
      `${path}/spending-cap`,
      async ({ workspace: w, actor, body }) => {
        const saved = await capForm.submit(body, (input) => service.setSpendingCap(w, actor, input))
        if (!saved.ok)
          return html(
            <SpendingCapForm workspaceId={w.id} values={saved.values} errors={saved.errors} />,
            422,
            noStore,
          )
        const cap = saved.result.spending_cap_cents
        const done =
          cap === null ? 'Cap removed from next month on.' : 'Cap saved: it applies from next month on.'
        return html(<SpendingCapForm workspaceId={w.id} values={capValue(cap)} done={done} />, 200, noStore)
      },
      { params, scope: admin, ...views },
    )
}
