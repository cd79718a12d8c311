import type { Core } from '../../core'
import { sendThroughUrl } from '../../shared/smtp'
import { brandingForMail } from '../branding/service'
import { sendThroughWorkspaceSmtp } from '../smtp/service'
import { keepInDevOutbox } from './outbox'
import { type MailBrand, PLATFORM_BRAND, renderMailHtml } from './render'
import type { MailMessage } from './service'

/**
 * Sends a mail now (the `mail.send` job calls this). Throws on failure so the job is retried; the
 * error never holds an SMTP password. A workspace's mail goes through its own SMTP server when it
 * has an active one; any other mail through the platform's (SMTP_URL). Without SMTP, the mail goes
 * to the dev outbox when it is on (config.devOutbox), else it is dropped with a warning. It goes
 * as text and HTML, the HTML in its workspace's brand. The log never gets its text: that is where
 * the links are.
 */
export async function deliverMail(core: Core, plain: MailMessage): Promise<void> {
  const msg = await branded(core, plain)
  if (msg.workspaceId && (await sendThroughWorkspaceSmtp(core, msg.workspaceId, msg))) return
  const { smtpUrl, smtpFrom } = core.config
  if (!smtpUrl) {
    if (!core.config.devOutbox) {
      core.log.warn('mail not delivered: set SMTP_URL', { to: msg.to, subject: msg.subject })
      return
    }
    await keepInDevOutbox(core, msg)
    core.log.info('mail kept in the dev outbox', { to: msg.to, subject: msg.subject })
    return
  }
  try {
    await sendThroughUrl(smtpUrl, {
      from: smtpFrom,
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
