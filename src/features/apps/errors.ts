import { defineErrorCodes } from '../../shared/errors'

/** What the apps feature refuses (its name rule is the shared one: NameErrors). */
export const AppsErrors = defineErrorCodes({
  /** Thrown with the rule the URI breaks (redirect-uris.ts) as its message. */
  REDIRECT_URI_INVALID: 'Enter a valid redirect URI',
  WORKSPACE_DELETING: 'This workspace is being deleted',
})
