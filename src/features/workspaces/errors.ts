import { defineErrorCodes } from '../../shared/errors'

/** What the workspaces feature refuses (its name rule is the shared one: NameErrors). */
export const WorkspaceErrors = defineErrorCodes({
  NOT_FOUND: 'Workspace not found',
})
