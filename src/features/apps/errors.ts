import { defineErrorCodes } from '../../shared/errors'

/** What the apps feature refuses (its name rule is the shared one: NameErrors). */
export const AppsErrors = defineErrorCodes({
  /** Thrown with the rule the URI breaks (redirect-uris.ts) as its message. */
  REDIRECT_URI_INVALID: 'Enter a valid redirect URI',
  WORKSPACE_DELETING: 'This workspace is being deleted',
  APP_NOT_FOUND: 'App not found',
  APP_TYPE_FIXED: "An app's type cannot change: create a new app of the other type",
  NO_CLIENT_SECRET: 'Only web apps have a client secret: single-page and native apps are public clients',
})
