import { expect } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import { findAccount } from '../../src/identity'
import { startTotpEnrolment, useTotpCode } from '../../src/identity/mfa/totp'
import type { ManualClock } from '../../src/shared/clock'
import type { TestServer } from './server'

/**
 * Gives account `id` of instance `ws` a confirmed authenticator app: the code of the clock's current
 * step, at any later step. The clock moves on a step, so the next code is not the used one.
 */
export async function enrolTotp(
  server: TestServer,
  clock: ManualClock,
  ws: string,
  id: string,
): Promise<() => string> {
  const account = await findAccount(server.core, ws, id)
  const enrolment = await startTotpEnrolment(server.core, account!, 'Acme')
  const totp = new TOTP({ secret: Secret.fromBase32(enrolment!.secret) })
  const code = () => totp.generate({ timestamp: clock.now() })
  expect(await useTotpCode(server.core.store, server.core, id, code(), { confirm: true })).toBe(true)
  clock.advance(30_000)
  return code
}
