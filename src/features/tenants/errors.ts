import { defineErrorCodes } from '../../shared/errors'

/** What the tenants of a workspace refuse. */
export const TenantErrors = defineErrorCodes({
  TENANT_NOT_FOUND: 'Tenant not found',
  SLUG_TAKEN: 'A tenant with this slug already exists in this workspace',
  SLUG_REPEATED: 'An earlier item of this batch has this slug',
  METADATA_NOT_OBJECT: 'Metadata must be a JSON object, e.g. {"plan": "gold"}',
  METADATA_TOO_LARGE: 'Keep metadata within 4 KiB of JSON, nested at most 16 levels deep',
  USER_NOT_FOUND: 'No user of this workspace has this id',
  USER_EMAIL_NOT_FOUND: 'No user of this workspace has this email',
  MEMBER_EXISTS: 'This user is already a member of the tenant',
  MEMBER_NOT_FOUND: 'This user is not a member of the tenant',
  NOT_A_MEMBER_BY_ID:
    'Adding a user who is not a member of the tenant needs the workspace:write scope; invite them by email instead',
  WORKSPACE_DELETING: 'This workspace is being deleted',
  WORKSPACE_NOT_ACTIVE: 'This workspace is not active yet',
})
