import type { AddressInfo } from 'node:net'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>`, ready for SMTP_URL. */
  url: string
  port: number
  /** Every mail received so far, parsed, in arrival order. */
  messages: ParsedMail[]
  /** Credentials of every AUTH the server saw (any is accepted). */
  logins: { username: string; password: string }[]
  /** The first mail (already received or still to come) that matches. */
  waitFor(predicate: (mail: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>
  close(): Promise<void>
}

/**
 * A real SMTP server on a free loopback port that keeps what it receives, for tests. With
 * `password`, an AUTH with any other password is refused (535), as a real server does.
 */
export async function startSmtpServer(opts: { password?: string } = {}): Promise<SmtpSink> {
  const messages: ParsedMail[] = []
  const logins: SmtpSink['logins'] = []
  const listeners = new Set<() => void>()
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 500,
    onAuth(auth, _session, callback) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '' })
      if (opts.password !== undefined && auth.password !== opts.password)
        return callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }))
      callback(null, { user: auth.username })
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          messages.push(mail)
          for (const notify of listeners) notify()
          callback()
        },
        (error: Error) => callback(error),
      )
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const port = (server.server.address() as AddressInfo).port

  const waitFor = (predicate: (mail: ParsedMail) => boolean, timeoutMs = 5_000) =>
    new Promise<ParsedMail>((resolve, reject) => {
      const check = () => {
        const mail = messages.find(predicate)
        if (!mail) return false
        clearTimeout(timer)
        listeners.delete(check)
        resolve(mail)
        return true
      }
      const timer = setTimeout(() => {
        listeners.delete(check)
        const seen = messages.map((m) => JSON.stringify(m.subject)).join(', ') || 'none'
        reject(new Error(`no matching mail within ${timeoutMs} ms (received: ${seen})`))
      }, timeoutMs)
      if (!check()) listeners.add(check)
    })

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    logins,
    waitFor,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
