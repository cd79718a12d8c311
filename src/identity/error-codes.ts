import { defineErrorCodes } from '../shared/errors'

/**
 * The identity plane's error codes (thrown with `appError`): what a hosted page answers, drawn by the
 * one error mapping (`errorsPlugin`), and what the account rules refuse.
 */
export const IDENTITY_ERRORS = defineErrorCodes({
  INTERACTION_EXPIRED: 'This sign-in request has expired. Start again from the application.',
  INTERACTION_MISMATCH: 'This sign-in request has expired. Start again.',
  GRANT_GONE: 'This sign-in request has expired. Start again.',
  PASSWORD_TOO_LONG: 'That password is too long.',
  PASSWORD_TOO_SHORT: 'Use a longer password.',
  EMAIL_TAKEN: 'An account with this email already exists. Sign in instead.',
  EMAIL_INVALID: 'Enter a valid email address.',
  MFA_OFF: 'Two-step verification is not available here.',
  PASSKEYS_OFF: 'Passkeys are not available here.',
  NOT_SIGNED_IN: 'Sign in to the application first, then come back to this page.',
  BAD_ORIGIN: 'This form was sent from another site.',
  NO_LOGO: 'This workspace has no logo.',
})
