import { defineErrorCodes } from '../../shared/errors'

/** What the login-policy feature refuses (its field ranges are the model's rules: 422 per field). */
export const LoginPolicyErrors = defineErrorCodes({
  WORKSPACE_DELETING: 'This workspace is being deleted',
})
