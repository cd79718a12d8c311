import { defineErrorCodes } from '../../shared/errors'

/** What dashboard sign-in and the device flow refuse. */
export const AuthErrors = defineErrorCodes({
  LOGIN_EXPIRED:
    'This sign-in attempt expired, was already used or was started in another browser. Start again.',
  LOGIN_DENIED: 'Sign-in was cancelled or refused.',
  LOGIN_FAILED: 'Sign-in could not be completed. Start again.',
  DEVICE_START_FAILED: 'Could not start the device flow',
  INVALID_TOKEN: 'Invalid or expired access token',
})
