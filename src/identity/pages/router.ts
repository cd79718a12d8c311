import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Core } from '../../core'
import { sendMail } from '../../features/mail/service'
import { AppError } from '../../shared/errors'
import {
  type Account,
  checkPassword,
  findAccountByEmail,
  issueAccountToken,
  markEmailVerified,
  setPassword,
  signUp,
  useAccountToken,
  verifyPassword,
} from '../accounts'
import { issuerFor } from '../instances'
import type { Instance } from '../pool'
import { LoginThrottle, minutesText, SIGN_IN_RULES, type ThrottleEntry } from '../throttle'
import { ForgotPasswordPage, MessagePage, ResetPasswordPage, SignInPage, SignUpPage } from './views'

const VERIFY_TTL_MS = 24 * 3600_000
const RESET_TTL_MS = 3600_000
/** Reset mails per address: every request takes a slot, none is given back. */
const RESET_MAIL_RULE = { limit: 3, windowMs: 15 * 60_000, lockMs: 15 * 60_000 }

export interface PageRequest {
  instance: Instance
  /** Path prefix of the instance (`/i/<id>`), for links the browser follows. */
  prefix: string
  req: IncomingMessage
  res: ServerResponse
  /** Path below the prefix and its query. */
  path: string
  query: URLSearchParams
  clientIp: string
}

function send(res: ServerResponse, status: number, body: string | Promise<string>) {
  return Promise.resolve(body).then((html) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    res.end(html)
  })
}

/** A mailed link that is unknown, expired or already used. */
const linkExpired = (p: PageRequest, message: string) =>
  send(p.res, 400, MessagePage({ title: 'Link expired', kind: 'error', message }))

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > 64 * 1024) throw new AppError('BODY_TOO_LARGE', 413, 'Request body too large')
    chunks.push(chunk as Buffer)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

const INTERACTION = /^\/interaction\/([A-Za-z0-9_-]+)(\/(login|signup|abort))?$/

/**
 * The hosted pages of an instance: sign-in and sign-up inside an oidc-provider interaction,
 * email verification and password reset. Returns false for paths that belong to oidc-provider.
 */
export function createPageRouter(core: Core) {
  const throttle = new LoginThrottle(core)

  async function mailVerification(account: Account, issuer: string) {
    const token = issueAccountToken(core, account, 'verify_email', VERIFY_TTL_MS)
    const link = `${issuer}/verify-email?token=${encodeURIComponent(token)}`
    await sendMail(core, {
      to: account.email,
      subject: 'Verify your email address',
      text: `Confirm that ${account.email} is your email address by opening this link:\n\n${link}\n\nThe link is valid for 24 hours. If you did not create an account, ignore this email.`,
      workspaceId: account.instanceId === 'platform' ? null : account.instanceId,
    })
  }

  async function interaction(p: PageRequest, uid: string, action: string | undefined): Promise<void> {
    const { provider } = p.instance
    const details = await provider.interactionDetails(p.req, p.res)
    if (details.uid !== uid)
      throw new AppError('INTERACTION_MISMATCH', 400, 'This sign-in request has expired. Start again.')
    const client = await provider.Client.find(String(details.params.client_id))
    const appName = client?.clientName ?? 'the application'
    const base = `${p.prefix}/interaction/${uid}`
    const links = {
      action: `${base}/login`,
      signUpUrl: `${base}/signup`,
      forgotUrl: `${p.prefix}/forgot-password`,
      appName,
    }

    if (action === 'abort') {
      await provider.interactionFinished(p.req, p.res, {
        error: 'access_denied',
        error_description: 'The user cancelled the sign-in',
      })
      return
    }

    if (details.prompt.name === 'consent') {
      // Apps of an instance are first-party: consent (e.g. prompt=consent for offline_access) is implied.
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({
            accountId: details.session?.accountId,
            clientId: String(details.params.client_id),
          })
      if (!grant) throw new AppError('GRANT_GONE', 400, 'This sign-in request has expired. Start again.')
      const missing = details.prompt.details as {
        missingOIDCScope?: string[]
        missingResourceScopes?: Record<string, string[]>
      }
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
      for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(resource, scopes.join(' '))
      }
      const grantId = await grant.save()
      await provider.interactionFinished(
        p.req,
        p.res,
        { consent: { grantId } },
        { mergeWithLastSubmission: true },
      )
      return
    }

    if (action === 'signup') {
      if (p.req.method !== 'POST') {
        await send(p.res, 200, SignUpPage({ action: `${base}/signup`, signInUrl: base, appName }))
        return
      }
      const form = await readForm(p.req)
      const values = { email: form.get('email') ?? '', name: form.get('name') ?? '' }
      try {
        const account = await signUp(core, p.instance.id, { ...values, password: form.get('password') ?? '' })
        await mailVerification(account, issuerFor(core.config, p.instance.id))
        await provider.interactionFinished(
          p.req,
          p.res,
          { login: { accountId: account.id } },
          { mergeWithLastSubmission: false },
        )
      } catch (e) {
        if (!(e instanceof AppError)) throw e
        await send(
          p.res,
          e.status === 409 ? 409 : 422,
          SignUpPage({ action: `${base}/signup`, signInUrl: base, appName, values, error: e.message }),
        )
      }
      return
    }

    if (action === 'login' && p.req.method === 'POST') {
      const form = await readForm(p.req)
      const email = (form.get('email') ?? '').trim().toLowerCase()
      const keys: Record<'account' | 'ip', ThrottleEntry> = {
        account: [`acct:${p.instance.id}:${email}`, SIGN_IN_RULES.account],
        ip: [`ip:${p.instance.id}:${p.clientIp}`, SIGN_IN_RULES.ip],
      }
      // Counted before the slow hash, so guesses sent at once cannot all get past the limit.
      const wait = throttle.reserve([keys.account, keys.ip])
      if (wait > 0) {
        const error = `Too many failed sign-in attempts. Try again in ${minutesText(wait)}.`
        await send(p.res, 429, SignInPage({ ...links, email, error }))
        return
      }
      const account = await verifyPassword(core, p.instance.id, email, form.get('password') ?? '')
      if (!account) {
        throttle.fail([keys.account, keys.ip])
        await send(p.res, 401, SignInPage({ ...links, email, error: 'Wrong email or password.' }))
        return
      }
      throttle.release([keys.ip])
      throttle.reset(keys.account[0])
      await provider.interactionFinished(
        p.req,
        p.res,
        { login: { accountId: account.id } },
        { mergeWithLastSubmission: false },
      )
      return
    }

    const hint = typeof details.params.login_hint === 'string' ? details.params.login_hint : ''
    await send(p.res, 200, SignInPage({ ...links, email: hint }))
  }

  async function verifyEmail(p: PageRequest) {
    const account = useAccountToken(core, p.instance.id, p.query.get('token') ?? '', 'verify_email')
    if (!account) {
      await linkExpired(p, 'This verification link is invalid, expired or already used.')
      return
    }
    markEmailVerified(core, account)
    await send(
      p.res,
      200,
      MessagePage({ title: 'Email verified', message: `Thanks — ${account.email} is verified.` }),
    )
  }

  async function forgotPassword(p: PageRequest) {
    const action = `${p.prefix}/forgot-password`
    if (p.req.method !== 'POST') {
      await send(p.res, 200, ForgotPasswordPage({ action }))
      return
    }
    const email = ((await readForm(p.req)).get('email') ?? '').trim().toLowerCase()
    const key = `reset:${p.instance.id}:${email}`
    // The same answer whether or not the account exists: no account enumeration.
    const notice = 'If an account exists for that address, we sent a link to reset the password.'
    if (throttle.reserve([[key, RESET_MAIL_RULE]]) === 0) {
      // Each request spends its slot, whether or not a mail goes out.
      throttle.fail([[key, RESET_MAIL_RULE]])
      const account = findAccountByEmail(core, p.instance.id, email)
      if (account) {
        const token = issueAccountToken(core, account, 'reset_password', RESET_TTL_MS)
        const link = `${issuerFor(core.config, p.instance.id)}/reset-password?token=${encodeURIComponent(token)}`
        await sendMail(core, {
          to: account.email,
          subject: 'Reset your password',
          text: `Someone asked to reset the password of ${account.email}. To choose a new password, open:\n\n${link}\n\nThe link is valid for 1 hour. If it was not you, ignore this email.`,
          workspaceId: account.instanceId === 'platform' ? null : account.instanceId,
        })
      }
    }
    await send(p.res, 200, ForgotPasswordPage({ action, notice }))
  }

  async function resetPassword(p: PageRequest) {
    const action = `${p.prefix}/reset-password`
    if (p.req.method !== 'POST') {
      await send(p.res, 200, ResetPasswordPage({ action, token: p.query.get('token') ?? '' }))
      return
    }
    const form = await readForm(p.req)
    const token = form.get('token') ?? ''
    const password = form.get('password') ?? ''
    try {
      checkPassword(password)
    } catch (e) {
      await send(p.res, 422, ResetPasswordPage({ action, token, error: (e as Error).message }))
      return
    }
    const account = useAccountToken(core, p.instance.id, token, 'reset_password')
    if (!account) {
      await linkExpired(p, 'This reset link is invalid, expired or already used. Ask for a new one.')
      return
    }
    await setPassword(core, account, password)
    // Whoever could read the mailbox proved the address too.
    markEmailVerified(core, account)
    throttle.reset(`acct:${p.instance.id}:${account.email}`)
    await send(
      p.res,
      200,
      MessagePage({
        title: 'Password changed',
        message: 'Your password has been changed. You can sign in with it now.',
      }),
    )
  }

  return async function handle(p: PageRequest): Promise<boolean> {
    try {
      const m = INTERACTION.exec(p.path)
      if (m) await interaction(p, m[1]!, m[3])
      else if (p.path === '/verify-email' && p.req.method === 'GET') await verifyEmail(p)
      else if (p.path === '/forgot-password') await forgotPassword(p)
      else if (p.path === '/reset-password') await resetPassword(p)
      else return false
    } catch (e) {
      const expired = e instanceof Error && (e.name === 'SessionNotFound' || e.name === 'InvalidRequest')
      if (!(e instanceof AppError) && !expired)
        core.log.error('hosted page failed', { path: p.path, error: String(e) })
      if (!p.res.headersSent) {
        const message =
          e instanceof AppError
            ? e.message
            : expired
              ? 'This sign-in request has expired. Start again from the application.'
              : 'Something went wrong. Try again.'
        await send(
          p.res,
          e instanceof AppError ? e.status : 400,
          MessagePage({ title: 'Sign-in interrupted', kind: 'error', message }),
        )
      }
    }
    return true
  }
}
