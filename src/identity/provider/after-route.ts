import type { KoaContextWithOIDC } from 'oidc-provider'

/**
 * A step of ours after oidc-provider answered a route (device polling, logout events), before the
 * answer goes out. Synchronous when it has nothing to do: the token path runs every step.
 */
export type AfterRoute = (ctx: KoaContextWithOIDC) => Promise<void> | undefined

/** One provider middleware for every step after the route: one layer of Koa's chain, not one each. */
export function afterRoute(steps: AfterRoute[]) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next()
    for (const step of steps) {
      const pending = step(ctx)
      if (pending) await pending
    }
  }
}
