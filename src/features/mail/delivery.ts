import type { Core } from '../../core'
import { sendThroughUrl } from '../../shared/smtp'
import { brandingForMail } from '../branding/service'
import { sendThroughWorkspaceSmtp } from '../smtp/service'
import { keepInDevOutbox } from './outbox'
import { type MailBrand, PLATFORM_BRAND, renderMailHtml } from './render'
import { routeMail } from './route'
import type { MailMessage } from './service'

/**
 * Sends a mail now (the `mail.send` job calls this) by the route routeMail finds then: the
 * workspace's own SMTP server, the platform's (SMTP_URL), the dev outbox, or nowhere (dropped with
 * a warning). Throws on failure so the job is retried; the error never holds an SMTP password. It
 * goes as text and HTML, the HTML in its workspace's brand. The log never gets its text: that is
 * where the links are.
 */
export async function deliverMail(core: Core, plain: MailMessage): Promise<void> {
  const msg = await branded(core, plain)
  const route = await routeMail(core, msg.workspaceId)
  switch (route.via) {
    case 'workspace':
      return sendThroughWorkspaceSmtp(core, route.provider, msg)
    case 'none':
      core.log.warn('mail not delivered: set SMTP_URL', { to: msg.to, subject: msg.subject })
      return
    case 'outbox':
      await keepInDevOutbox(core, msg)
      core.log.info('mail kept in the dev outbox', { to: msg.to, subject: msg.subject })
      return
  }
  try {
    await sendThroughUrl(route.smtpUrl, {
      from: core.config.smtpFrom,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      html: msg.html,
    })
  } catch (e) {
    throw new Error(`mail delivery failed: ${(e as Error).message}`)
  }
}

/** The brand a mail is sent under: its workspace's branding as it is now, or the platform's. */
async function brandOf(core: Core, workspaceId: string | null | undefined): Promise<MailBrand> {
  if (!workspaceId) return PLATFORM_BRAND
  const b = await brandingForMail(core, workspaceId)
  return {
    displayName: b.display_name ?? PLATFORM_BRAND.displayName,
    logoUrl: b.logo_url,
    primaryColor: b.primary_color ?? PLATFORM_BRAND.primaryColor,
    backgroundColor: b.background_color ?? PLATFORM_BRAND.backgroundColor,
    textColor: b.text_color ?? PLATFORM_BRAND.textColor,
    privacyPolicyUrl: b.privacy_policy_url,
    termsUrl: b.terms_url,
  }
}

/**
 * Every mail is multipart: a text mail gets its HTML part here, at sending time, in the brand its
 * workspace has then (a branding change acts on the next mail of every node).
 */
async function branded(core: Core, msg: MailMessage): Promise<MailMessage> {
  if (msg.html !== undefined) return msg
  return { ...msg, html: renderMailHtml(msg.text, await brandOf(core, msg.workspaceId)) }
}
