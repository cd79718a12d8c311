import { escapeHtml } from '@kitajs/html'
import { and, eq, inArray } from 'drizzle-orm'
import addressparser from 'nodemailer/lib/addressparser'
import type { Actor, Principal } from '../../access/model'
import { fieldChanges } from '../../audit/record'
import type { Core } from '../../core'
import { isoTime } from '../../shared/clock'
import { displayName } from '../../shared/display-names'
import { appError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { OutboundRefused, outboundUrlProblem, resolveOutbound } from '../../shared/outbound'
import { SmtpFailure, type SmtpMail, sendThroughServer, sendThroughUrl } from '../../shared/smtp'
import { routeMail, type TestCaller } from '../mail/service'
import type { Workspace } from '../workspaces/service'
import { SmtpErrors } from './errors'
import { SmtpModel } from './model'
import { smtpProviders } from './schema'

export type SmtpProvider = typeof smtpProviders.$inferSelect

/** The steps of a change (SPEC "SMTP rules"), each committed on its own. */
export type SmtpStep = 'list' | 'create' | 'activate' | 'delete'

export interface SmtpServiceOptions {
  /**
   * Runs before each step of a change, with its name: a throw stops the change there, as a crash
   * or a lost database would. Tests fail each step so; the product passes none.
   */
  beforeStep?: (step: SmtpStep) => void | Promise<void>
}

/** The sealing context of a provider's password: a sealed value moved to another row does not open. */
const passwordContext = (providerId: string) => `smtp:${providerId}`

/** Every field of SmtpView, as the audit log names them (none is a secret: `has_password` is a flag). */
const VIEW_FIELDS = Object.keys(SmtpModel.view.properties) as (keyof SmtpModel.View)[]

/** The platform default's sender (SMTP_FROM), the only part of it a workspace is shown. */
export function platformView(core: Pick<Core, 'config'>): SmtpModel.View {
  const [first] = addressparser(core.config.smtpFrom, { flatten: true })
  return {
    provider: 'platform',
    host: null,
    port: null,
    username: null,
    security: null,
    from_address: first?.address || core.config.smtpFrom,
    from_name: first?.name || null,
    has_password: false,
  }
}

export const smtpView = (p: SmtpProvider): SmtpModel.View => ({
  provider: 'custom',
  host: p.host,
  port: p.port,
  username: p.username,
  security: p.security,
  from_address: p.fromAddress,
  from_name: p.fromName,
  has_password: p.passwordSealed !== null,
})

/** `host` as an https URL's host, so the outbound guard judges it as it judges URLs. */
const asUrl = (host: string) => new URL(`https://${host.includes(':') ? `[${host}]` : host}/`)

/**
 * The host as stored: trimmed, parsed as a URL's host would be (so `0x7f.1` is judged as the
 * 127.0.0.1 it is), without brackets or a trailing dot; a 422 when the guard refuses it.
 */
function checkedHost(raw: string, allowPrivate: boolean): string {
  const loc = ['body', 'host']
  let url: URL
  try {
    url = asUrl(raw.trim().replace(/^\[(.*)\]$/, '$1'))
  } catch {
    throw appError(SmtpErrors.HOST_REFUSED, 422, { loc, message: 'Enter a host name or an IP address' })
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '')
  if (!host || url.port || url.pathname !== '/')
    throw appError(SmtpErrors.HOST_REFUSED, 422, { loc, message: 'Enter a host name or an IP address' })
  const problem = outboundUrlProblem(asUrl(host).href, { allowHttp: false, allowPrivate })
  if (problem) throw appError(SmtpErrors.HOST_REFUSED, 422, { loc, message: problem.replace('URL', 'host') })
  return host
}

/** Every provider row of a workspace; each one is custom (the platform default is never a row). */
const providersOf = (core: Pick<Core, 'db'>, workspaceId: string) =>
  core.db.select().from(smtpProviders).where(eq(smtpProviders.workspaceId, workspaceId))

/** The workspace's active custom provider, or undefined while the platform default is in effect. */
export async function activeProvider(
  core: Pick<Core, 'db'>,
  workspaceId: string,
): Promise<SmtpProvider | undefined> {
  const [row] = await core.db
    .select()
    .from(smtpProviders)
    .where(and(eq(smtpProviders.workspaceId, workspaceId), eq(smtpProviders.active, true)))
    .limit(1)
  return row
}

/**
 * Sends one mail through a provider now: its host resolved and checked by the outbound guard,
 * the connection made to that address (the name kept for TLS), the password opened only here.
 * Answers the server's reply; throws SmtpFailure (never holding the password) otherwise.
 */
async function sendThrough(core: Core, p: SmtpProvider, mail: Omit<SmtpMail, 'from'>): Promise<string> {
  let address: string
  try {
    address = await resolveOutbound(asUrl(p.host), {
      allowHttp: false,
      allowPrivate: core.config.smtp.allowPrivate,
    })
  } catch (e) {
    if (e instanceof OutboundRefused) throw new SmtpFailure('blocked', `${e.message}: not connected`)
    throw e
  }
  const password = p.passwordSealed ? core.secrets.open(p.passwordSealed, passwordContext(p.id)) : null
  return sendThroughServer(
    { host: p.host, address, port: p.port, security: p.security, username: p.username, password },
    { ...mail, from: { name: p.fromName ?? '', address: p.fromAddress } },
  )
}

/** Keeps the outcome of a delivery on the provider's row, for the dashboard. */
async function recordOutcome(core: Core, id: string, failure: SmtpFailure | null): Promise<void> {
  const now = core.clock.now()
  await core.db
    .update(smtpProviders)
    .set(failure ? { lastErrorAt: now, lastError: failure.message } : { lastSuccessAt: now })
    .where(eq(smtpProviders.id, id))
}

/**
 * The mail feature's share: sends a mail through a workspace's active custom provider (the mail
 * route found it) and records the outcome on it; throws SmtpFailure when the server did not take
 * the mail, so the job is retried.
 */
export async function sendThroughWorkspaceSmtp(
  core: Core,
  provider: SmtpProvider,
  mail: Omit<SmtpMail, 'from'>,
): Promise<void> {
  try {
    await sendThrough(core, provider, {
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    })
  } catch (e) {
    if (e instanceof SmtpFailure) await recordOutcome(core, provider.id, e)
    throw e
  }
  await recordOutcome(core, provider.id, null)
}

/** What the dashboard shows of a provider beside its settings: how its last deliveries went. */
export interface SmtpHealth {
  lastSuccessAt: string | null
  lastErrorAt: string | null
  lastError: string | null
}

/** The test mail's caller of a principal. */
export const testCallerOf = (principal: Principal): TestCaller =>
  principal.kind === 'user' ? principal.account : null

const testMail = (workspace: Workspace, to: string, now: number) => {
  const text = `This is a test mail from the SMTP settings of the workspace ${workspace.name}, sent at ${isoTime(now)}.\nIf you can read it, this workspace's mail goes through.`
  return {
    to,
    subject: `Test mail from ${workspace.name}`,
    text,
    html: text
      .split('\n')
      .map((line) => `<p>${escapeHtml(line)}</p>`)
      .join(''),
  }
}

/**
 * A workspace's SMTP settings (DESIGN "SMTP", SPEC "SMTP and branding"): read with
 * `workspace:read`, changed and tested with `workspace:admin` (the guard's): mail carries sign-in
 * and reset links, so whoever picks the server can read them. Every change is audited without the
 * password, which is sealed at rest and never shown.
 */
export function createSmtpService(core: Core, opts: SmtpServiceOptions = {}) {
  const allowPrivate = core.config.smtp.allowPrivate
  const step = async <T>(name: SmtpStep, run: () => Promise<T>): Promise<T> => {
    await opts.beforeStep?.(name)
    return run()
  }
  const refuseDeleting = (workspace: Workspace) => {
    if (workspace.state === 'deleting') throw appError(SmtpErrors.WORKSPACE_DELETING, 409)
  }

  /**
   * Puts `next` (a created provider, or null: the platform default) in effect, in one transaction:
   * the active one is deactivated first (one active per workspace is a unique index), then `next`
   * activated. Audited as `smtp.updated` or `smtp.reverted`, the password never in it.
   */
  const switchTo = (workspace: Workspace, by: Actor, next: SmtpProvider | null) =>
    core.store.tx(async (tx) => {
      await tx.serialize(`smtp:${workspace.id}`)
      const ofWorkspace = eq(smtpProviders.workspaceId, workspace.id)
      const [off] = await tx.db
        .update(smtpProviders)
        .set({ active: false })
        .where(and(ofWorkspace, eq(smtpProviders.active, true)))
        .returning()
      if (next) {
        const [on] = await tx.db
          .update(smtpProviders)
          .set({ active: true })
          .where(and(ofWorkspace, eq(smtpProviders.id, next.id)))
          .returning({ id: smtpProviders.id })
        if (!on) throw appError(SmtpErrors.CHANGED_MEANWHILE, 409)
      }
      const target = next ?? off
      if (!target) return
      const viewOf = (p: SmtpProvider | null | undefined) => (p ? smtpView(p) : platformView(core))
      await core.audit(
        {
          workspaceId: workspace.id,
          actor: by,
          action: next ? 'smtp.updated' : 'smtp.reverted',
          target: { type: 'smtp_provider', id: target.id },
          changes: fieldChanges(viewOf(off), viewOf(next), VIEW_FIELDS),
        },
        { tx },
      )
    })

  return {
    async get(workspace: Workspace): Promise<SmtpModel.View> {
      const active = await activeProvider(core, workspace.id)
      return active ? smtpView(active) : platformView(core)
    },

    /** The settings in effect, and how the active custom provider's last deliveries went (null for the platform's). */
    async status(workspace: Workspace): Promise<{ view: SmtpModel.View; health: SmtpHealth | null }> {
      const active = await activeProvider(core, workspace.id)
      if (!active) return { view: platformView(core), health: null }
      return {
        view: smtpView(active),
        health: {
          lastSuccessAt: active.lastSuccessAt === null ? null : isoTime(active.lastSuccessAt),
          lastErrorAt: active.lastErrorAt === null ? null : isoTime(active.lastErrorAt),
          lastError: active.lastError,
        },
      }
    },

    /**
     * PUT (SPEC "SMTP rules"), each step committed on its own: list the providers (every row is a
     * custom one); create the new one, inactive; activate it, which deactivates the previous one
     * (one transaction, audited); delete the ones listed. Stopped anywhere, the workspace keeps
     * an active provider that worked before (or the new one), and at worst inactive rows the next
     * change deletes.
     */
    async replace(workspace: Workspace, by: Actor, input: SmtpModel.Update): Promise<SmtpModel.View> {
      refuseDeleting(workspace)
      const host = checkedHost(input.host, allowPrivate)
      const fromName = input.from_name?.trim() ? displayName(input.from_name, ['body', 'from_name']) : null
      const username = input.username?.trim() || null
      const found = await step('list', () => providersOf(core, workspace.id))
      const before = found.find((p) => p.active)
      // The dashboard's "leave empty to keep": the same account on the same server keeps its password.
      const kept =
        input.password === undefined &&
        before?.passwordSealed &&
        before.host === host &&
        before.username === username
          ? core.secrets.open(before.passwordSealed, passwordContext(before.id))
          : null
      const password = input.password ?? kept
      const now = core.clock.now()
      const id = newId('smtp', now)
      const created = await step('create', async () => {
        const [row] = await core.db
          .insert(smtpProviders)
          .values({
            id,
            workspaceId: workspace.id,
            host,
            port: input.port,
            username,
            passwordSealed: password === null ? null : core.secrets.seal(password, passwordContext(id)),
            security: input.security ?? 'starttls',
            fromAddress: input.from_address.trim(),
            fromName,
            active: false,
            createdAt: now,
          })
          .returning()
        return row!
      })
      await step('activate', () => switchTo(workspace, by, created))
      const replaced = found.map((p) => p.id)
      if (replaced.length)
        await step('delete', () =>
          core.db
            .delete(smtpProviders)
            .where(and(eq(smtpProviders.workspaceId, workspace.id), inArray(smtpProviders.id, replaced))),
        )
      return smtpView(created)
    },

    /**
     * DELETE (SPEC "SMTP rules"): the platform default back in effect (every row deactivated, one
     * transaction, audited), then every custom provider deleted.
     */
    async revert(workspace: Workspace, by: Actor): Promise<SmtpModel.View> {
      refuseDeleting(workspace)
      await step('activate', () => switchTo(workspace, by, null))
      await step('delete', () =>
        core.db.delete(smtpProviders).where(eq(smtpProviders.workspaceId, workspace.id)),
      )
      return platformView(core)
    },

    /**
     * Sends a test mail through the provider in effect now, not through the queue, and answers
     * what the server said or what went wrong (time-out, TLS, authentication, refused connection,
     * an address the guard refuses). The outcome is kept on the provider like a delivery's.
     * Through the platform's server it goes only to the caller's own verified address.
     */
    async test(workspace: Workspace, caller: TestCaller, to: string): Promise<SmtpModel.Tested> {
      const route = await routeMail(core, workspace.id, { kind: 'test', caller, to })
      const provider = route.via === 'workspace' ? 'custom' : 'platform'
      if (route.via === 'none' && route.recipient)
        throw appError(SmtpErrors.TEST_RECIPIENT_REFUSED, 422, { loc: ['body', 'to'], message: route.why })
      if (route.via !== 'workspace' && route.via !== 'platform')
        return { ok: false, provider, response: null, error: { type: 'not_configured', message: route.why } }
      // Through the platform's server it goes to the caller's address as stored (the route checked it is `to`).
      const mail = testMail(workspace, route.via === 'platform' ? caller!.email : to, core.clock.now())
      try {
        const response =
          route.via === 'workspace'
            ? await sendThrough(core, route.provider, mail)
            : await sendThroughUrl(route.smtpUrl, { ...mail, from: core.config.smtpFrom })
        if (route.via === 'workspace') await recordOutcome(core, route.provider.id, null)
        return { ok: true, provider, response, error: null }
      } catch (e) {
        if (!(e instanceof SmtpFailure)) throw e
        if (route.via === 'workspace') await recordOutcome(core, route.provider.id, e)
        return { ok: false, provider, response: null, error: { type: e.kind, message: e.message } }
      }
    },
  }
}

/** The SMTP teardown step of a workspace deletion. */
export async function deleteWorkspaceSmtp(core: Core, workspaceId: string): Promise<void> {
  await core.db.delete(smtpProviders).where(eq(smtpProviders.workspaceId, workspaceId))
}
