import type { Core } from '../../core'
import { MessagePage } from '../../shared/views/hosted-layout'
import type { Extensions } from '../engine/extension'
import { hostedHtml } from '../engine/hosted'
import type { IdentityError } from '../errors'
import { PLATFORM } from '../instances'

/** What every page flow works with, built once per plane. */
export interface PageContext {
  core: Core
  /** What the features lend the engine. */
  extensions: Extensions
}

export type { PageRequest } from '../engine/hosted'

/** A page that ends a flow with an identity error (a link expired, passwords off), with its status. */
export const errorPage = (error: IdentityError) =>
  hostedHtml(MessagePage({ title: error.title, message: error.message, link: error.link }), error.status)

/** The workspace a mail is sent for: none for the platform instance. */
export const mailWorkspace = (instanceId: string) => (instanceId === PLATFORM ? null : instanceId)

/** A mailed link that is unknown, expired or already used. */
export const linkExpired = (message: string): IdentityError => ({
  status: 400,
  title: 'Link expired',
  message,
})

/** A page as the body of oidc-provider's Koa context (its page sources: logout, device code). */
export const render = (ctx: { type: string; body: unknown }, body: string | Promise<string>) =>
  Promise.resolve(body).then((html) => {
    ctx.type = 'html'
    ctx.body = html
  })
