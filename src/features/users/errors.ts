import { defineErrorCodes } from '../../shared/errors'

/** What the users feature refuses. */
export const UsersErrors = defineErrorCodes({
  EMAIL_TAKEN: 'A user with this email already exists in this workspace',
  LIMIT_INVALID: 'Use a limit from 1 to 200',
  CURSOR_INVALID: 'This cursor is not one this list handed out',
  USER_NOT_FOUND: 'User not found',
  WORKSPACE_DELETING: 'This workspace is being deleted',
  WORKSPACE_NOT_ACTIVE: 'This workspace is not active yet',
})
