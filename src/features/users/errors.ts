import { defineErrorCodes } from '../../shared/errors'

/** What the users feature refuses. */
export const UsersErrors = defineErrorCodes({
  EMAIL_TAKEN: 'A user with this email already exists in this workspace',
  USER_NOT_FOUND: 'User not found',
  WORKSPACE_DELETING: 'This workspace is being deleted',
  WORKSPACE_NOT_ACTIVE: 'This workspace is not active yet',
})
