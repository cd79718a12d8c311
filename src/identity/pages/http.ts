import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import type { Broker } from '../broker/protocol'
import type { Extensions } from '../engine/extension'
import type { Instance } from '../engine/pool'
import type { IdentityError } from '../errors'
import { PLATFORM } from '../instances'

/** What every page flow works with, built once per plane. */
export interface PageContext {
  core: Core
  /** What the features lend the engine. */
  extensions: Extensions
  /** Sign-in through external IdPs. */
  broker: Broker
}

/** One request to a hosted page. */
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

export function send(res: ServerResponse, status: number, body: string | Promise<string>) {
  return Promise.resolve(body).then((html) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    res.end(html)
  })
}

export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > 64 * 1024) throw new AppError('BODY_TOO_LARGE', 413, 'Request body too large')
    chunks.push(chunk as Buffer)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

/** The workspace a mail is sent for: none for the platform instance. */
export const mailWorkspace = (instanceId: string) => (instanceId === PLATFORM ? null : instanceId)

/** oidc-provider's word for an interaction this browser does not hold: no cookie, or expired, or ended. */
export const interactionGone = (e: unknown) => e instanceof Error && e.name === 'SessionNotFound'

/** A mailed link that is unknown, expired or already used. */
export const linkExpired = (message: string): IdentityError => ({
  status: 400,
  title: 'Link expired',
  message,
})

/** A page as the body of oidc-provider's Koa context (its page sources). */
export const render = (ctx: { type: string; body: unknown }, body: string | Promise<string>) =>
  Promise.resolve(body).then((html) => {
    ctx.type = 'html'
    ctx.body = html
  })
