import { markEmailVerified, useAccountToken } from '../accounts'
import { writeError } from '../errors'
import { DonePage } from './components'
import { linkExpired, type PageContext, type PageRequest, send } from './http'

/** The link mailed at sign-up (sign-up.tsx): proves the address, once. */
export async function verifyEmail({ core }: PageContext, p: PageRequest) {
  const account = await useAccountToken(core, p.instance.id, p.query.get('token') ?? '', 'verify_email')
  if (!account) {
    writeError(p.res, linkExpired('This verification link is invalid, expired or already used.'))
    return
  }
  await markEmailVerified(core, account)
  await send(
    p.res,
    200,
    DonePage({ title: 'Email verified', message: `Thanks — ${account.email} is verified.` }),
  )
}
