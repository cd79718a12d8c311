import { isIP } from 'node:net'
import { createTransport, type Transporter } from 'nodemailer'

/**
 * Talking to an SMTP server: the platform's (SMTP_URL) and a workspace's own (DESIGN "SMTP"). One
 * place builds the transport, keeps the password out of every error (nodemailer's messages can
 * echo what was sent, and they end up in job rows and the log) and says what went wrong in words a
 * person can act on.
 */

export type SmtpSecurity = 'starttls' | 'tls' | 'none'

/** Give up on a server that does not answer within this time (connect, greeting, each command). */
export const SMTP_TIMEOUT_MS = 10_000

const timeouts = {
  connectionTimeout: SMTP_TIMEOUT_MS,
  greetingTimeout: SMTP_TIMEOUT_MS,
  socketTimeout: SMTP_TIMEOUT_MS,
}

/** A workspace's server: the name as given, and the address the outbound guard checked. */
export interface SmtpServer {
  /** The name the user gave: TLS sends it (SNI) and checks the certificate against it. */
  host: string
  /** Where to connect: `host` resolved and checked once, so no second lookup can answer otherwise. */
  address: string
  port: number
  security: SmtpSecurity
  username: string | null
  password: string | null
}

export interface SmtpMail {
  from: { name: string; address: string }
  to: string
  subject: string
  text: string
  html?: string
}

/** A transport to a workspace's server, for one mail (mail volume is low: no pool). */
export function serverTransport(server: SmtpServer): Transporter {
  const servername = isIP(server.host) ? undefined : server.host
  return createTransport({
    host: server.address,
    port: server.port,
    secure: server.security === 'tls',
    requireTLS: server.security === 'starttls',
    ignoreTLS: server.security === 'none',
    ...(servername ? { servername, tls: { servername } } : {}),
    ...(server.username ? { auth: { user: server.username, pass: server.password ?? '' } } : {}),
    ...timeouts,
  })
}

// One transport per thread and SMTP URL: each job worker builds its own, and a URL per key keeps
// tests (one SMTP server each) apart. Not pooled: a connection per mail survives server restarts.
const urlTransports = new Map<string, Transporter>()

/** The platform's transport (SMTP_URL); options in the URL's query string win over the defaults. */
export function urlTransport(smtpUrl: string): Transporter {
  let transport = urlTransports.get(smtpUrl)
  if (!transport) {
    transport = createTransport({ url: smtpUrl, ...timeouts })
    urlTransports.set(smtpUrl, transport)
  }
  return transport
}

/** A URL part decoded as nodemailer decodes it: a stray `%` is kept literally. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

/** The username and password of an SMTP URL, decoded; null when it has none. */
export function urlCredentials(smtpUrl: string): { username: string | null; password: string | null } {
  try {
    const { username, password } = new URL(smtpUrl)
    return { username: username ? decoded(username) : null, password: password ? decoded(password) : null }
  } catch {
    return { username: null, password: null }
  }
}

/**
 * Every form in which a password can come back in a server's answer: as is, URL-encoded, and
 * base64 (AUTH LOGIN sends the password so, AUTH PLAIN `\0user\0password`).
 */
function secretForms(password: string, username: string | null): string[] {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
  const forms = [
    password,
    encodeURIComponent(password),
    b64(password),
    b64(`\0${username ?? ''}\0${password}`),
  ]
  return [...new Set(forms)].filter((f) => f.length > 0).sort((a, b) => b.length - a.length)
}

/** `text` with the password (in any form a server may echo) replaced by `***`. */
export function redactPassword(
  text: string,
  password: string | null,
  username: string | null = null,
): string {
  if (!password) return text
  let out = text
  for (const form of secretForms(password, username)) out = out.replaceAll(form, '***')
  return out
}

/** What kind of failure it was: what a person checks next. */
export type SmtpFailureKind =
  | 'timeout'
  | 'tls'
  | 'auth'
  | 'refused'
  | 'rejected'
  /** Not tried: the outbound guard refused the address (private, loopback, link-local). */
  | 'blocked'
  | 'other'

/** A failed send, its message safe to store, log and show (no password in it). */
export class SmtpFailure extends Error {
  constructor(
    readonly kind: SmtpFailureKind,
    message: string,
  ) {
    super(message)
    this.name = 'SmtpFailure'
  }
}

interface NodemailerError {
  code?: string
  message?: string
  response?: string
  responseCode?: number
}

/**
 * A nodemailer error as a SmtpFailure naming `where` (`host:port`): time-out, TLS, authentication,
 * a refused connection, a refused mail, or anything else; the password never in its message.
 */
export function smtpFailure(
  error: unknown,
  where: string,
  password: string | null,
  username: string | null = null,
): SmtpFailure {
  const e = (error ?? {}) as NodemailerError
  const raw = e.response || e.message || String(error)
  const said = redactPassword(raw.replace(/\s+/g, ' ').trim(), password, username).slice(0, 500)
  const message = e.message ?? ''
  if (e.code === 'ETIMEDOUT' || /ETIMEDOUT|timed? ?out/i.test(message))
    return new SmtpFailure('timeout', `No answer from ${where} within ${SMTP_TIMEOUT_MS / 1000} s`)
  if (/ECONNREFUSED/.test(message))
    return new SmtpFailure('refused', `${where} refused the connection (ECONNREFUSED)`)
  if (e.code === 'EAUTH' || e.code === 'ENOAUTH')
    return new SmtpFailure('auth', `${where} refused the username or password: ${said}`)
  if (e.code === 'ETLS' || /TLS|SSL|certificate|wrong version number/i.test(message))
    return new SmtpFailure('tls', `TLS with ${where} failed: ${said}`)
  if (e.responseCode && e.responseCode >= 400)
    return new SmtpFailure('rejected', `${where} refused the mail: ${said}`)
  return new SmtpFailure('other', `Sending through ${where} failed: ${said}`)
}

/** The server's answer to the mail (`250 …`), or what went wrong, as a SmtpFailure. */
async function sendWith(
  transport: Transporter,
  mail: SmtpMail | (Omit<SmtpMail, 'from'> & { from: string }),
  where: string,
  password: string | null,
  username: string | null,
): Promise<string> {
  try {
    const info = (await transport.sendMail(mail)) as { response?: string }
    return redactPassword(String(info.response ?? ''), password, username)
  } catch (e) {
    throw smtpFailure(e, where, password, username)
  }
}

/** Sends one mail through a workspace's server (connected at its checked address). */
export async function sendThroughServer(server: SmtpServer, mail: SmtpMail): Promise<string> {
  const transport = serverTransport(server)
  try {
    return await sendWith(transport, mail, `${server.host}:${server.port}`, server.password, server.username)
  } finally {
    transport.close()
  }
}

/** Sends one mail through the platform's server (SMTP_URL), from SMTP_FROM. */
export function sendThroughUrl(
  smtpUrl: string,
  mail: Omit<SmtpMail, 'from'> & { from: string },
): Promise<string> {
  const { username, password } = urlCredentials(smtpUrl)
  return sendWith(urlTransport(smtpUrl), mail, new URL(smtpUrl).host, password, username)
}
