import type { EventEmitter } from 'node:events'
import type Provider from 'oidc-provider'
import type { KoaContextWithOIDC } from 'oidc-provider'
import type { Core } from '../../core'
import { isStoreUnavailable, loggable } from '../../db/store'
import { setError } from '../errors'
import { type AfterRoute, runAfterRoute } from './after-route'
import { currentId } from './instance-scope'

/**
 * oidc-provider 9.x emits `<endpoint>.error` for a request it refused and `server_error` for one
 * it failed; the list follows lib/helpers/initialize_app.js. EventEmitter has no wildcard.
 */
const ERROR_EVENTS = [
  'authorization.error',
  'backchannel.error',
  'code_verification.error',
  'device_authorization.error',
  'device_resume.error',
  'discovery.error',
  'end_session.error',
  'end_session_confirm.error',
  'end_session_success.error',
  'grant.error',
  'introspection.error',
  'jwks.error',
  'pushed_authorization_request.error',
  'registration_create.error',
  'registration_delete.error',
  'registration_read.error',
  'registration_update.error',
  'revocation.error',
  'userinfo.error',
  'server_error',
]

/**
 * Answers that are steps of a normal flow, not failures: device polling before approval (RFC 8628
 * §3.5) and silent authentication without a session (OpenID Connect Core §3.1.2.6).
 */
const ROUTINE = new Set([
  'authorization_pending',
  'slow_down',
  'login_required',
  'interaction_required',
  'consent_required',
  'account_selection_required',
])

/** A Koa context; `oidc` exists only once a route of oidc-provider has matched. */
type Ctx = Omit<KoaContextWithOIDC, 'oidc'> & { oidc?: KoaContextWithOIDC['oidc'] }

/** What may be logged of an error: codes and fixed descriptions, never parameters or headers. */
function errorFields(ctx: Ctx | undefined, err: unknown) {
  const e = (err ?? {}) as { name?: string; message?: string; error?: string; error_description?: string }
  return {
    instance_id: currentId(),
    request_id: ctx?.get('x-request-id') || undefined,
    method: ctx?.method,
    // Without the query: it may carry codes and tokens.
    path: ctx?.path,
    route: ctx?.oidc?.route,
    status: ctx?.status,
    // Re-rendered form errors (an unknown user code) carry no protocol code, only a class name.
    error: e.error ?? e.name,
    error_description: e.error_description,
    client_id: ctx?.oidc?.client?.clientId,
  }
}

const exceptionOf = (err: unknown) => {
  const { error, stack } = loggable(err)
  const name = err instanceof Error ? err.name : 'Error'
  return { exception: `${name}: ${error}`.slice(0, 300), stack }
}

/** A page for browsers, RFC 6749 §5.2-shaped JSON for everything else (as oidc-provider answers). */
function respond(ctx: Ctx, status: number, error: string, description: string) {
  setError(
    ctx as unknown as KoaContextWithOIDC,
    {
      status,
      title: status === 404 ? 'Not found' : 'Something went wrong',
      message: description,
      json: { error, error_description: description },
    },
    ctx.get('accept'),
  )
}

/**
 * Makes every error of an instance a proper answer and one JSON log line. oidc-provider answers
 * the errors it raises itself and emits an event for each; what escapes its handlers would reach
 * Koa's defaults (a text/plain body, and the stack on stderr): a first middleware catches it, and
 * the app's own `error` listener replaces the one that writes to stderr. The same middleware runs
 * `after`, our steps once the route answered (after-route.ts).
 */
export function handleProviderErrors(
  core: Core,
  provider: Provider,
  after: readonly AfterRoute[] = [],
): void {
  // The typings know only some event names; Provider is a Koa app, hence an EventEmitter.
  const events = provider as unknown as EventEmitter
  for (const event of ERROR_EVENTS) {
    events.on(event, (ctx: Ctx, err: unknown) => {
      const fields = { event, ...errorFields(ctx, err) }
      if (event === 'server_error') core.log.error('identity error', { ...fields, ...exceptionOf(err) })
      else if (ROUTINE.has(String(fields.error))) core.log.debug('identity error', fields)
      else core.log.warn('identity error', fields)
    })
  }

  provider.use(async (koaCtx, next) => {
    const ctx = koaCtx as unknown as Ctx
    try {
      await next()
      // Our steps after the route, in this one layer of Koa's chain: the token path runs them all.
      const pending = runAfterRoute(after, ctx as unknown as KoaContextWithOIDC)
      if (pending) await pending
    } catch (err) {
      if (!ctx.headerSent && ctx.writable) {
        // As Koa does for an error: nothing set on the way (cookies included) goes out.
        for (const name of ctx.res.getHeaderNames()) ctx.res.removeHeader(name)
        if (isStoreUnavailable(err)) {
          respond(
            ctx,
            503,
            'temporarily_unavailable',
            'The service is temporarily unavailable. Try again shortly.',
          )
        } else respond(ctx, 500, 'server_error', 'Something went wrong. Try again.')
      }
      core.log.error('identity plane failed', {
        ...errorFields(ctx, undefined),
        ...exceptionOf(err),
      })
      return
    }
    // No route matched: Koa would answer a text/plain "Not Found".
    if (ctx.status === 404 && ctx.body == null) {
      respond(ctx, 404, 'not_found', 'There is nothing at this address.')
    }
  })

  // Koa installs its stderr writer only when the app has no `error` listener of its own.
  events.on('error', (err: unknown, ctx?: Ctx) => {
    core.log.error('identity plane failed', {
      ...errorFields(ctx, undefined),
      ...exceptionOf(err),
    })
  })
}
