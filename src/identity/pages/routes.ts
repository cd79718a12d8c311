import type { AnyElysia } from 'elysia'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import { Broker } from '../broker/protocol'
import type { Extensions } from '../engine/extension'
import { writeError } from '../errors'
import { acceptInvite } from './accept-invite'
import { htmxAsset } from './assets'
import { brokerCallback } from './broker'
import { forgotPassword } from './forgot-password'
import type { PageContext, PageRequest } from './http'
import { interaction } from './interaction'
import { issuerPage } from './issuer'
import { logoAsset } from './logo'
import { manageMfa } from './mfa-manage'
import { resetPassword } from './reset-password'
import { verifyEmailOfSignIn } from './verify-continue'
import { verifyEmail } from './verify-email'

interface PageRoute {
  path: string | RegExp
  /** Methods answered; any when absent. */
  methods?: string[]
  run(c: PageContext, p: PageRequest, match: RegExpExecArray | null): Promise<void>
}

/**
 * The hosted pages of an instance, in front of oidc-provider: sign-in and sign-up inside an
 * interaction (and through an external IdP, whose answer comes to `/broker/callback`), the mailed
 * links' pages, a signed-in user's two-step verification (`/mfa`), the htmx of the pages that
 * poll, the workspace's logo, and a page at the issuer URL itself. The device and logout pages are
 * oidc-provider's, drawn by device.tsx and logout.tsx.
 */
const ROUTES: PageRoute[] = [
  {
    path: /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|signup|mfa|link|passkey|verify|forgot|abort|broker|step)|\/idp\/([A-Za-z0-9_-]+))?$/,
    run: (c, p, m) => interaction(c, p, m![1]!, m![3] ? 'idp' : m![2], m![3]),
  },
  { path: '/broker/callback', methods: ['GET'], run: (_c, p) => brokerCallback(p) },
  {
    path: /^\/interaction\/([A-Za-z0-9_-]+)\/verify-email$/,
    methods: ['GET'],
    run: (c, p, m) => verifyEmailOfSignIn(c, p, m![1]!),
  },
  {
    path: /^\/interaction\/([A-Za-z0-9_-]+)\/reset-password$/,
    methods: ['GET', 'POST'],
    run: (c, p, m) => resetPassword(c, p, m![1]!),
  },
  { path: '/verify-email', methods: ['GET'], run: verifyEmail },
  { path: '/forgot-password', run: (c, p) => forgotPassword(c, p) },
  { path: '/reset-password', run: (c, p) => resetPassword(c, p) },
  { path: '/accept-invite', methods: ['GET', 'POST'], run: acceptInvite },
  { path: '/mfa', methods: ['GET', 'POST'], run: manageMfa },
]

function route(p: PageRequest): { route: PageRoute; match: RegExpExecArray | null } | null {
  for (const r of ROUTES) {
    if (r.methods && !r.methods.includes(p.req.method ?? 'GET')) continue
    if (typeof r.path === 'string') {
      if (r.path === p.path) return { route: r, match: null }
      continue
    }
    const match = r.path.exec(p.path)
    if (match) return { route: r, match }
  }
  return null
}

/**
 * Answers a request for a hosted page; false for paths that belong to oidc-provider. Every failure
 * becomes a page: a refusal says why, anything else is logged and said in general terms.
 */
export function createPageRouter(context: PageContext) {
  const c = context
  return async function handle(p: PageRequest): Promise<boolean> {
    const found = route(p)
    if (!found) return false
    try {
      await found.route.run(context, p, found.match)
    } catch (e) {
      const expired = e instanceof Error && (e.name === 'SessionNotFound' || e.name === 'InvalidRequest')
      if (!(e instanceof AppError) && !expired)
        c.core.log.error('hosted page failed', { path: p.path, error: String(e) })
      if (!p.res.headersSent) {
        writeError(p.res, {
          status: e instanceof AppError ? e.status : 400,
          title: 'Sign-in interrupted',
          message:
            e instanceof AppError
              ? e.message
              : expired
                ? 'This sign-in request has expired. Start again from the application.'
                : 'Something went wrong. Try again.',
        })
      }
    }
    return true
  }
}

/** What every page flow works with, built once per plane. */
export const pageContext = (core: Core, extensions: Extensions): PageContext => ({
  core,
  extensions,
  broker: new Broker(core),
})

/**
 * The hosted pages as Elysia plugins under every instance (engine/instance-app.ts): each starts with
 * `hostedPage`, reads its form through TypeBox and answers HTML with `hostedHtml`; a refusal is an
 * AppError, drawn by the one error mapping.
 */
export const hostedPages = (c: PageContext): AnyElysia[] => [issuerPage(c), htmxAsset(), logoAsset(c)]
