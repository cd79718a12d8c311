import { defineErrorCodes } from '../../shared/errors'

/** What the machine keys of a workspace refuse. */
export const MachineKeyErrors = defineErrorCodes({
  KEY_NOT_FOUND: 'Machine key not found',
  EXPIRES_IN_PAST: 'Choose an expiry in the future, or none',
  SCOPE_NOT_HELD: 'A key can only be given scopes its creator holds',
  ALREADY_ROTATING: 'This key was rotated already; rotate its replacement instead',
  KEY_EXPIRED: 'This key has expired; create a new one',
  TOO_MANY_KEYS: 'This workspace has too many machine keys; delete unused ones first',
  WORKSPACE_DELETING: 'This workspace is being deleted',
  CALLER_NOT_ACTIVE:
    'The key of this token was revoked, rotated or has expired: it cannot create or rotate keys any more',
  OUTLIVES_CALLER: 'A key cannot rotate a key that would outlive it',
})
