import { type AnyElysia, Elysia, t } from 'elysia'
import type { Core } from '../../core'
import type { Extensions } from '../engine/extension'
import { hostedPage } from '../engine/hosted'
import { acceptInvite } from './accept-invite'
import { htmxAsset } from './assets'
import { brokerCallback } from './broker'
import { forgotPassword } from './forgot-password'
import { INTERACTION_FORMS, type InteractionFormAction, type InteractionPost, PageForms } from './forms'
import type { PageContext } from './http'
import { INTERACTION_ACTIONS, interaction, interactionPost } from './interaction'
import { issuerPage } from './issuer'
import { logoAsset } from './logo'
import { manageMfa } from './mfa-manage'
import { resetPassword } from './reset-password'
import { verifyEmailOfSignIn } from './verify-continue'
import { verifyEmail } from './verify-email'

/** What every page flow works with, built once per plane. */
export const pageContext = (core: Core, extensions: Extensions): PageContext => ({ core, extensions })

/** An interaction's uid, as oidc-provider makes them. */
const uid = t.String({ pattern: '^[A-Za-z0-9_-]+$' })

/**
 * The posts of an interaction's pages, one route each with its form's schema (INTERACTION_FORMS):
 * the flow is handed the form of its action.
 */
function interactionForms(c: PageContext) {
  const app = new Elysia({ name: 'interaction-forms' }).use(hostedPage('hosted-page'))
  for (const action of Object.keys(INTERACTION_FORMS) as InteractionFormAction[]) {
    app.post(
      `/interaction/:uid/${action}`,
      // The body was checked against the schema of this same action.
      ({ page, params, body }) =>
        interactionPost(c, page, params.uid, { action, form: body } as InteractionPost),
      { params: t.Object({ uid }), body: INTERACTION_FORMS[action] },
    )
  }
  return app
}

/**
 * The hosted pages of an instance, in front of oidc-provider: sign-in and sign-up inside an
 * interaction (and through an external IdP, whose answer comes to `/broker/callback`), the mailed
 * links' pages, a signed-in user's two-step verification (`/mfa`), the htmx of the pages that
 * poll, the workspace's logo, and a page at the issuer URL itself. The device and logout pages are
 * oidc-provider's, drawn by device.tsx and logout.tsx. Every post declares its form (forms.ts): a
 * flow is handed the checked values.
 */
function flows(c: PageContext) {
  const withUid = { params: t.Object({ uid }) }
  const withAction = { params: t.Object({ uid, action: t.UnionEnum(INTERACTION_ACTIONS) }) }
  const withIdp = { params: t.Object({ uid, idp: uid }) }
  return (
    new Elysia({ name: 'hosted-flows' })
      .use(hostedPage('hosted-page'))
      // An interaction's pages (sign-in, its steps), and their forms' posts.
      .get('/interaction/:uid', ({ page, params }) => interaction(c, page, params.uid), withUid)
      .get(
        '/interaction/:uid/:action',
        ({ page, params }) => interaction(c, page, params.uid, params.action),
        withAction,
      )
      .get(
        '/interaction/:uid/idp/:idp',
        ({ page, params }) => interaction(c, page, params.uid, 'idp', params.idp),
        withIdp,
      )
      .use(interactionForms(c))
      // The mailed links, opened in a sign-in's interaction or on their own.
      .get(
        '/interaction/:uid/verify-email',
        ({ page, params }) => verifyEmailOfSignIn(c, page, params.uid),
        withUid,
      )
      .get(
        '/interaction/:uid/reset-password',
        ({ page, params }) => resetPassword(c, page, null, params.uid),
        withUid,
      )
      .post(
        '/interaction/:uid/reset-password',
        ({ page, params, body }) => resetPassword(c, page, body, params.uid),
        { ...withUid, body: PageForms.reset },
      )
      .get('/verify-email', ({ page }) => verifyEmail(c, page))
      .get('/forgot-password', ({ page }) => forgotPassword(c, page, null))
      .post('/forgot-password', ({ page, body }) => forgotPassword(c, page, body), { body: PageForms.forgot })
      .get('/reset-password', ({ page }) => resetPassword(c, page, null))
      .post('/reset-password', ({ page, body }) => resetPassword(c, page, body), { body: PageForms.reset })
      .get('/accept-invite', ({ page }) => acceptInvite(c, page, null))
      .post('/accept-invite', ({ page, body }) => acceptInvite(c, page, body), {
        body: PageForms.acceptInvite,
      })
      // An external IdP's answer, and a signed-in user's two-step verification.
      .get('/broker/callback', ({ page }) => brokerCallback(page))
      .get('/mfa', ({ page }) => manageMfa(c, page, null))
      .post('/mfa', ({ page, body }) => manageMfa(c, page, body), { body: PageForms.manageMfa })
  )
}

/**
 * The hosted pages as Elysia plugins under every instance (engine/instance-app.ts): each starts with
 * `hostedPage`, answers HTML with `hostedHtml` and refuses with an AppError, drawn by the one error
 * mapping.
 */
export const hostedPages = (c: PageContext): AnyElysia[] => [
  issuerPage(c),
  htmxAsset(),
  logoAsset(c),
  flows(c),
]
