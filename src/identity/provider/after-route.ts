import type { KoaContextWithOIDC } from 'oidc-provider'

/**
 * A step of ours after oidc-provider answered a route (device polling, logout events), before the
 * answer goes out. Synchronous when it has nothing to do: the token path runs every step.
 */
export type AfterRoute = (ctx: KoaContextWithOIDC) => Promise<void> | undefined

/**
 * Runs every step after the route, in order (inside the provider's first middleware, error-events.ts,
 * so a step's failure is answered as the route's would be): synchronous when none has work to do.
 */
export function runAfterRoute(
  steps: readonly AfterRoute[],
  ctx: KoaContextWithOIDC,
): Promise<void> | undefined {
  for (let i = 0; i < steps.length; i++) {
    const pending = steps[i]!(ctx)
    if (pending) return pending.then(() => runAfterRoute(steps.slice(i + 1), ctx))
  }
  return undefined
}
