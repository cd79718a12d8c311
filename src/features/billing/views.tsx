import type { PlanName } from '../../config'
import type { FieldErrors, FormValues } from '../../shared/forms'
import { Alert, FieldError, HxForm } from '../../shared/views/components'
import type { BillingModel } from './model'
import { PLAN_RANK } from './plans'
import type { MonthUsage } from './usage'

export const billingPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/billing`

const PLAN_NAMES: Record<PlanName, string> = { free: 'Free', pro: 'Pro', enterprise: 'Enterprise' }
const day = (iso: string) => `${iso.slice(0, 10)} (UTC)`

type CapField = 'spending_cap_cents'

/** Billing is off on this installation: what that means, and nothing to press. */
export function BillingNotConfigured() {
  return (
    <div class="panel" id="billing-off">
      <p>
        Billing is not configured on this installation: every workspace is on the <strong>Free</strong> plan,
        and nothing is metered or charged.
      </p>
    </div>
  )
}

/** The plan, the subscription, a scheduled switch (with its release) and this month's usage. */
export function PlanPanel({
  workspaceId,
  state,
  usage,
  admin,
}: {
  workspaceId: string
  state: BillingModel.State
  usage: MonthUsage
  admin: boolean
}) {
  const change = state.scheduled_change
  return (
    <div class="panel" id="billing-plan">
      {change ? (
        <Alert kind="warn">
          <span id="scheduled-switch" safe>
            {`Scheduled: this workspace switches to ${PLAN_NAMES[change.plan]} on ${day(change.effective_at)}, at the end of the current period.`}
          </span>
          {admin ? (
            <form
              method="post"
              action={`${billingPath(workspaceId)}/schedule-plan-change/release`}
              hx-post={`${billingPath(workspaceId)}/schedule-plan-change/release`}
            >
              <button class="btn secondary small" type="submit" safe>
                {`Keep ${PLAN_NAMES[state.plan]}`}
              </button>
            </form>
          ) : (
            ''
          )}
        </Alert>
      ) : (
        ''
      )}
      <p>
        Plan:{' '}
        <strong id="billing-plan-name" safe>
          {PLAN_NAMES[state.plan]}
        </strong>
        {state.status ? <span class="badge">{state.status}</span> : ''}
      </p>
      {state.current_period_end ? (
        <p class="hint" safe>
          {`${state.cancel_at_period_end ? 'Ends' : 'Renews'} on ${day(state.current_period_end)}.`}
        </p>
      ) : (
        ''
      )}
      <p id="billing-usage" safe>
        {`${usage.mau} of ${usage.includedMau} included monthly active users in ${usage.month}.`}
      </p>
      {usage.blocked ? (
        <Alert kind="error">
          New sign-ups are blocked until next month: the monthly user limit is reached.
        </Alert>
      ) : (
        ''
      )}
    </div>
  )
}

/** Checkout (Pro; Enterprise through sales), the portal, and a downgrade to schedule. */
export function PlanActions({
  workspaceId,
  state,
  hasCustomer,
}: {
  workspaceId: string
  state: BillingModel.State
  hasCustomer: boolean
}) {
  const path = billingPath(workspaceId)
  const lower = (['free', 'pro'] as PlanName[]).filter((p) => PLAN_RANK[p] < PLAN_RANK[state.plan])
  const live = state.status === 'active' || state.status === 'trialing' || state.status === 'past_due'
  return (
    <div class="panel" id="billing-actions">
      {state.plan === 'free' ? (
        <form method="post" action={`${path}/checkout`} hx-post={`${path}/checkout`}>
          <input type="hidden" name="plan" value="pro" />
          <button class="btn" type="submit">
            Upgrade to Pro
          </button>
        </form>
      ) : (
        ''
      )}
      {state.plan !== 'enterprise' ? <p class="hint">Enterprise: contact our sales team.</p> : ''}
      {hasCustomer ? (
        <form method="post" action={`${path}/portal`} hx-post={`${path}/portal`}>
          <button class="btn secondary" type="submit">
            Manage billing
          </button>
        </form>
      ) : (
        ''
      )}
      {live && lower.length && !state.scheduled_change ? (
        <form method="post" action={`${path}/schedule-plan-change`} hx-post={`${path}/schedule-plan-change`}>
          <label for="downgrade-plan">Downgrade at the end of the period to</label>
          <select id="downgrade-plan" name="plan">
            {lower.map((p) => (
              <option value={p} safe>
                {PLAN_NAMES[p]}
              </option>
            ))}
          </select>
          <button class="btn secondary" type="submit">
            Schedule downgrade
          </button>
        </form>
      ) : (
        ''
      )}
    </div>
  )
}

/** The overage cap (cents); a change applies from the next month on. */
export function SpendingCapForm({
  workspaceId,
  values,
  errors = {},
  done,
}: {
  workspaceId: string
  values: FormValues<CapField>
  errors?: FieldErrors<CapField>
  done?: string
}) {
  return (
    <HxForm
      id="billing-cap"
      action={`${billingPath(workspaceId)}/spending-cap`}
      target="#billing-cap"
      swap="outerHTML"
      invalid={Object.keys(errors).length > 0}
      done={done}
    >
      <label for="spending-cap">Overage spending cap (cents)</label>
      <input
        id="spending-cap"
        name="spending_cap_cents"
        inputmode="numeric"
        value={values.spending_cap_cents}
        aria-describedby="spending-cap-error"
      />
      <FieldError id="spending-cap-error" message={errors.spending_cap_cents} />
      <p class="hint">
        Empty: no cap. When one more monthly active user would pass it, new sign-ups stop. A change applies
        from the next month on.
      </p>
      <button class="btn" type="submit">
        Save cap
      </button>
    </HxForm>
  )
}
