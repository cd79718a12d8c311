import { interactionPolicy } from 'oidc-provider'
import { PLATFORM } from '../instances'
import type { PageContext } from '../pages/http'
import { current } from '../provider/instance-scope'
import type { InteractionStep, StepContext } from './extension'
import { type InteractionDetails as Details, hostedHtml, type PageRequest } from './hosted'

type Prompts = ReturnType<typeof interactionPolicy.base>

const scopesOf = (scope: unknown) =>
  String(scope ?? '')
    .split(' ')
    .filter(Boolean)

/**
 * The features' interaction steps as prompts of oidc-provider's policy, in their order after
 * `login` (the account is known) and before `consent`: each asks its step's `check` once the
 * sign-in before it is done, until the step answered (its name in the interaction's result).
 */
export function addSteps(prompts: Prompts, steps: readonly InteractionStep[]): Prompts {
  const { Check, Prompt } = interactionPolicy
  const at = prompts.findIndex((p) => p.name === 'consent')
  steps.forEach((step, i) => {
    const check = new Check(`${step.name}_step`, `The ${step.name} step applies`, async (ctx) => {
      const { session, params, result } = ctx.oidc
      const instance = current()
      // Its own key only: a result is a plain object, whose `constructor` (say) is inherited.
      if (instance.id === PLATFORM || !session?.accountId || (result && Object.hasOwn(result, step.name)))
        return Check.NO_NEED_TO_PROMPT
      const asked: StepContext = {
        instance: { id: instance.id, issuer: instance.issuer },
        accountId: session.accountId,
        scopes: scopesOf(params?.scope),
      }
      return (await step.check(asked)) ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT
    })
    prompts.add(new Prompt({ name: step.name, requestable: false }, check), at + i)
  })
  return prompts
}

/** The step an interaction stands at, if it is a feature's. */
export const stepOf = (c: PageContext, details: Details) =>
  c.extensions.steps.find((s) => s.name === details.prompt.name)

/** The fields a page posted, as a step's page reads them; a field the form left out is absent. */
const formOf = (posted: Readonly<Record<string, string | undefined>>) =>
  new URLSearchParams(
    Object.entries(posted).filter((entry): entry is [string, string] => entry[1] !== undefined),
  )

/**
 * A feature's step of a sign-in: its page, and its post (`{interaction}/step`, whose fields are the
 * step's own: `posted`, null for the page), until it answers `done`; the sign-in then goes on to
 * the next prompt.
 */
export async function runStep(
  p: PageRequest,
  details: Details,
  step: InteractionStep,
  posted: Readonly<Record<string, string | undefined>> | null,
): Promise<Response> {
  const accountId = details.session?.accountId
  if (!accountId) throw new Error(`step ${step.name} asked without an account`)
  const answer = await step.page({
    instance: { id: p.instance.id, issuer: p.instance.issuer },
    accountId,
    scopes: scopesOf(details.params.scope),
    method: posted ? 'POST' : 'GET',
    form: posted ? formOf(posted) : new URLSearchParams(),
    action: `${p.prefix}/interaction/${details.uid}/step`,
  })
  if ('html' in answer) return hostedHtml(answer.html)
  return p.interaction.finish({ [step.name]: { done: true } }, true)
}
