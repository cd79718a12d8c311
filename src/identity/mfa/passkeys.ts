import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import { and, eq, lt, sql } from 'drizzle-orm'
import type { Core } from '../../core'
import type { Account } from '../accounts'
import { issuerFor } from '../instances'
import { accountPasskeys, webauthnChallenges } from '../schema'

/** How long a browser has to answer a challenge (the ceremony's own timeout is shorter). */
const CHALLENGE_TTL_MS = 5 * 60_000
const TIMEOUT_MS = 120_000

/** A passkey sign-in says what kind it was (RFC 8176): device-bound `hwk`, synced `swk`. */
type PasskeyAmr = 'hwk' | 'swk'

/**
 * The relying party is the instance's issuer: its host is the RP ID the credential is scoped to,
 * its origin the one the browser must report.
 */
function relyingParty(core: Core, instanceId: string) {
  const issuer = new URL(issuerFor(core.config, instanceId))
  return { rpID: issuer.hostname, origin: issuer.origin }
}

async function keepChallenge(
  core: Core,
  instanceId: string,
  challenge: string,
  purpose: 'register' | 'authenticate',
  accountId: string | null,
) {
  await core.db.insert(webauthnChallenges).values({
    challenge,
    instanceId,
    accountId,
    purpose,
    expiresAt: core.clock.now() + CHALLENGE_TTL_MS,
  })
}

/**
 * Takes back the challenge a response answers, once: the row is deleted as it is read, so a
 * response replayed (to this node or another) finds nothing. Null when it is unknown, expired, of
 * another purpose or instance, or was issued for another account.
 */
async function takeChallenge(
  core: Core,
  instanceId: string,
  clientDataJSON: unknown,
  purpose: 'register' | 'authenticate',
  accountId: string | null,
): Promise<string | null> {
  let challenge: unknown
  try {
    challenge = JSON.parse(Buffer.from(String(clientDataJSON), 'base64url').toString('utf8')).challenge
  } catch {
    return null
  }
  if (typeof challenge !== 'string' || !challenge) return null
  const [row] = await core.db
    .delete(webauthnChallenges)
    .where(
      and(
        eq(webauthnChallenges.challenge, challenge),
        eq(webauthnChallenges.instanceId, instanceId),
        eq(webauthnChallenges.purpose, purpose),
      ),
    )
    .returning()
  if (!row || row.expiresAt <= core.clock.now() || row.accountId !== accountId) return null
  return challenge
}

/** The account's passkeys, for excluding them from a new registration or allowing them in a sign-in. */
const passkeysOf = (core: Core, accountId: string) =>
  core.db.select().from(accountPasskeys).where(eq(accountPasskeys.accountId, accountId))

/** Options for `navigator.credentials.create()`: a discoverable credential with user verification. */
export async function registrationOptions(
  core: Core,
  account: Account,
  rpName: string,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rpID } = relyingParty(core, account.instanceId)
  const existing = await passkeysOf(core, account.id)
  const options = await generateRegistrationOptions({
    rpName,
    rpID,
    userName: account.email,
    userDisplayName: account.name || account.email,
    userID: new TextEncoder().encode(account.id),
    attestationType: 'none',
    timeout: TIMEOUT_MS,
    excludeCredentials: existing.map((p) => ({
      id: p.credentialId,
      transports: p.transports as AuthenticatorTransportFuture[],
    })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  })
  await keepChallenge(core, account.instanceId, options.challenge, 'register', account.id)
  return options
}

const parse = <T>(json: string): T | null => {
  try {
    const value = JSON.parse(json) as unknown
    return value && typeof value === 'object' ? (value as T) : null
  } catch {
    return null
  }
}

/** Verifies a new credential and keeps it; what kind it is, or null when the response does not hold. */
export async function registerPasskey(
  core: Core,
  account: Account,
  json: string,
): Promise<PasskeyAmr | null> {
  const response = parse<RegistrationResponseJSON>(json)
  if (!response?.response) return null
  const challenge = await takeChallenge(
    core,
    account.instanceId,
    response.response.clientDataJSON,
    'register',
    account.id,
  )
  if (!challenge) return null
  const { rpID, origin } = relyingParty(core, account.instanceId)
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: true,
    })
  } catch {
    return null
  }
  if (!verified.verified || !verified.registrationInfo) return null
  const { credential, credentialDeviceType, credentialBackedUp } = verified.registrationInfo
  // A credential id already registered (ids come from the authenticator) is refused, not a 500.
  const [added] = await core.db
    .insert(accountPasskeys)
    .values({
      credentialId: credential.id,
      accountId: account.id,
      instanceId: account.instanceId,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      deviceType: credentialDeviceType,
      backedUp: credentialBackedUp,
      createdAt: core.clock.now(),
    })
    .onConflictDoNothing()
    .returning({ id: accountPasskeys.credentialId })
  if (!added) return null
  return credentialDeviceType === 'singleDevice' ? 'hwk' : 'swk'
}

/**
 * Options for `navigator.credentials.get()`: for a second factor, the account's own credentials;
 * for a password-less sign-in (`accountId` null), none listed: the authenticator offers its
 * discoverable ones.
 */
export async function authenticationOptions(
  core: Core,
  instanceId: string,
  accountId: string | null,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { rpID } = relyingParty(core, instanceId)
  const allow = accountId ? await passkeysOf(core, accountId) : []
  const options = await generateAuthenticationOptions({
    rpID,
    timeout: TIMEOUT_MS,
    userVerification: 'required',
    allowCredentials: allow.map((p) => ({
      id: p.credentialId,
      transports: p.transports as AuthenticatorTransportFuture[],
    })),
  })
  await keepChallenge(core, instanceId, options.challenge, 'authenticate', accountId)
  return options
}

type PasskeyCheck =
  | { ok: true; accountId: string; amr: PasskeyAmr }
  /** `accountId`: whose credential was presented, when known (its failure counts on that account). */
  | { ok: false; accountId: string | null }

/**
 * Verifies a sign-in with a passkey of the instance: the challenge is spent, the signature checked
 * with the stored key, the counter moved on. With `accountId` (a second factor) the credential must
 * be that account's.
 */
export async function verifyPasskey(
  core: Core,
  instanceId: string,
  json: string,
  accountId: string | null,
): Promise<PasskeyCheck> {
  const response = parse<AuthenticationResponseJSON>(json)
  if (!response?.response || typeof response.id !== 'string') return { ok: false, accountId }
  const [stored] = await core.db
    .select()
    .from(accountPasskeys)
    .where(and(eq(accountPasskeys.credentialId, response.id), eq(accountPasskeys.instanceId, instanceId)))
    .limit(1)
  const owner = stored?.accountId ?? accountId
  const challenge = await takeChallenge(
    core,
    instanceId,
    response.response.clientDataJSON,
    'authenticate',
    accountId,
  )
  if (!stored || !challenge || (accountId && stored.accountId !== accountId))
    return { ok: false, accountId: owner }
  const { rpID, origin } = relyingParty(core, instanceId)
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: true,
      credential: {
        id: stored.credentialId,
        publicKey: new Uint8Array(Buffer.from(stored.publicKey, 'base64url')),
        counter: stored.counter,
        transports: stored.transports as AuthenticatorTransportFuture[],
      },
    })
  } catch {
    return { ok: false, accountId: owner }
  }
  if (!verified.verified) return { ok: false, accountId: owner }
  const info = verified.authenticationInfo
  // The signature counter only moves forward (an authenticator without one always says 0): of two
  // uses carrying the same counter, on any nodes, one passes; the other looks like a cloned key.
  const [moved] = await core.db
    .update(accountPasskeys)
    .set({ counter: info.newCounter, lastUsedAt: core.clock.now(), backedUp: info.credentialBackedUp })
    .where(
      and(
        eq(accountPasskeys.credentialId, stored.credentialId),
        info.newCounter === 0 ? sql`true` : lt(accountPasskeys.counter, info.newCounter),
      ),
    )
    .returning({ id: accountPasskeys.credentialId })
  if (!moved) return { ok: false, accountId: owner }
  return { ok: true, accountId: stored.accountId, amr: stored.deviceType === 'singleDevice' ? 'hwk' : 'swk' }
}
