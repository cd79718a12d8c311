import { defineErrorCodes } from '../../shared/errors'

/** What "Try sign-in" refuses. */
export const TrySignInErrors = defineErrorCodes({
  NOT_ACTIVE: 'The workspace is not active yet: its sign-in pages are not served.',
  SESSION_REQUIRED: 'Sign in to the dashboard to try sign-in.',
  EXPIRED:
    'This sign-in attempt expired, was already used or was started in another dashboard session. Try again.',
  DENIED: 'The sign-in did not finish.',
  FAILED: 'The sign-in finished, but its tokens could not be checked. Try again.',
})
