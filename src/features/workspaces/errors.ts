import { defineErrorCodes } from '../../shared/errors'

/** What the members of a workspace (DESIGN "Who may do what") refuse. */
export const MemberErrors = defineErrorCodes({
  MEMBER_EXISTS: 'This account is already a member of the workspace',
  INVITATION_PENDING: 'This address already has a pending invitation; cancel it to invite again',
  MEMBER_NOT_FOUND: 'Member not found',
  LAST_OWNER: 'A workspace needs an owner: make someone else an owner first',
  OWNER_ONLY: 'Only an owner can grant, change or remove the owner role',
  PEOPLE_ONLY: 'Members are added and their roles changed by people, not by machine keys',
  WORKSPACE_DELETING: 'This workspace is being deleted',
  INVITATION_INVALID: 'This invitation link is not valid: it was used, cancelled or never existed',
  INVITATION_EXPIRED: 'This invitation has expired',
  INVITATION_OTHER_ACCOUNT: 'This invitation is for another email address',
  EMAIL_NOT_VERIFIED: 'Verify your email address before accepting this invitation',
})

/** What a workspace itself refuses. */
export const WorkspaceErrors = defineErrorCodes({
  CONFIRM_MISMATCH: "Type the workspace's exact name to confirm its deletion",
  CONFIRM_REQUIRED: 'A machine key deletes a workspace only with its exact name: {"confirm": "<name>"}',
  RATE_NEEDS_PLAN: "Raising the identity plane's rate needs the Pro plan or above",
})
