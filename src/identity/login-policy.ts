import type { AttemptRule } from '../limits/buckets'

/**
 * The login policy of an instance as the identity plane applies it (DESIGN "Login policy"). The
 * login-policy feature owns the rows and hands them in as its identity extension's `loginPolicy`; the plane
 * reads it once per Provider build (the pool), so a change reaches every node through
 * `core.instances.changed`.
 */
export type MfaMode = 'off' | 'optional' | 'required'

export interface LoginPolicy {
  allowPassword: boolean
  allowRegistration: boolean
  allowExternalIdps: boolean
  requireEmailVerification: boolean
  mfa: MfaMode
  /** 8..128 */
  passwordMinLength: number
  /** Failures (password or MFA) that lock an account; 0 = never. */
  lockoutThreshold: number
  lockoutMinutes: number
  sessionLifetimeHours: number
}

export const DEFAULT_LOGIN_POLICY: Readonly<LoginPolicy> = Object.freeze({
  allowPassword: true,
  allowRegistration: true,
  allowExternalIdps: true,
  requireEmailVerification: true,
  mfa: 'off',
  passwordMinLength: 8,
  lockoutThreshold: 5,
  lockoutMinutes: 15,
  sessionLifetimeHours: 168,
})

/**
 * The platform instance (dashboard users) has no workspace policy: its users may enrol MFA. A
 * dashboard sign-up signs in at once and mails a verification link, as before login policies (the
 * dashboard's own sign-up is not changed by them), so it does not require a verified address.
 */
export const PLATFORM_LOGIN_POLICY: Readonly<LoginPolicy> = Object.freeze({
  ...DEFAULT_LOGIN_POLICY,
  requireEmailVerification: false,
  mfa: 'optional',
})

/**
 * The per-account lock of an instance's login policy (the `signInAccount` bucket's rule for it):
 * `lockoutThreshold` failures within `lockoutMinutes` lock the account for `lockoutMinutes`; null
 * when the policy never locks (0). Every factor of a sign-in (password, TOTP, recovery code,
 * passkey) counts its failures on the same key with this rule.
 */
export const accountLockRule = (
  policy: Pick<LoginPolicy, 'lockoutThreshold' | 'lockoutMinutes'>,
): AttemptRule | null =>
  policy.lockoutThreshold > 0
    ? {
        limit: policy.lockoutThreshold,
        windowMs: policy.lockoutMinutes * 60_000,
        lockMs: policy.lockoutMinutes * 60_000,
      }
    : null
