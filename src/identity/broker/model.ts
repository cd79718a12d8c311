import type { IdpType } from '../../config'

/** What an IdP asks for, unless its creator said otherwise (GitHub: the user and their addresses). */
export const DEFAULT_IDP_SCOPES: Record<IdpType, string[]> = {
  google: ['openid', 'email', 'profile'],
  microsoft: ['openid', 'email', 'profile'],
  github: ['read:user', 'user:email'],
  oidc: ['openid', 'email', 'profile'],
}

/** Who the IdP says signed in. */
export interface ExternalIdentity {
  /** The IdP's stable id of the user (`sub`, GitHub's numeric id). */
  subject: string
  email: string | null
  /** Only what the IdP asserts: `email_verified`, or GitHub's verified primary address. */
  emailVerified: boolean
  name: string
  /** RFC 8176 methods the IdP says it used (`amr`); empty when it says none. */
  amr: string[]
}

/** A sign-in the IdP's answer does not allow; the message is for the person signing in. */
export class BrokerRefused extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message)
  }
}

/** RFC 8176's methods by the kind of factor they prove; the others (risk, location, …) prove none. */
const FACTOR_KIND: Record<string, 'know' | 'have' | 'are'> = {
  pwd: 'know',
  pin: 'know',
  kba: 'know',
  otp: 'have',
  sms: 'have',
  tel: 'have',
  hwk: 'have',
  swk: 'have',
  sc: 'have',
  fpt: 'are',
  face: 'are',
  iris: 'are',
  retina: 'are',
  vbm: 'are',
}

/**
 * Whether an IdP's `amr` says the user proved more than one factor there: `mfa`, or methods of two
 * different kinds (something known, held, or of the person). Then the login policy's second step
 * is not asked again.
 */
export const assertsMfa = (amr: readonly string[]) =>
  amr.includes('mfa') || new Set(amr.map((m) => FACTOR_KIND[m]).filter(Boolean)).size >= 2
