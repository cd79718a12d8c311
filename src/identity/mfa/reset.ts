import type { Core } from '../../core'

/**
 * Removes a user's second factors (TOTP secret, recovery codes, passkeys) so they enrol again at
 * their next sign-in; an admin's "reset MFA" (DELETE …/users/{user_id}/mfa). A stub on this branch:
 * the MFA part of issue 20 brings the real one at this path, with the same signature.
 */
export async function resetAccountMfa(_core: Core, _instanceId: string, _accountId: string): Promise<void> {}
