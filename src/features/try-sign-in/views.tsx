import { Alert, type SidebarLink, TrySignInButton, WorkspacePage } from '../../shared/views/components'
import type { ShellUser } from '../../shared/views/layout'
import type { TryResult } from './service'

/**
 * RFC 8176's authentication method references, in plain words: the ones our hosted pages record,
 * then the rest of the registry (an external IdP's, carried over).
 */
const AMR_WORDS: Record<string, string> = {
  pwd: 'password',
  otp: 'one-time code (authenticator app or recovery code)',
  hwk: 'passkey kept on one device (hardware-bound key)',
  swk: 'passkey synced between devices (software-bound key)',
  mfa: 'more than one factor',
  face: 'face recognition',
  fpt: 'fingerprint',
  geo: 'location',
  iris: 'iris scan',
  kba: 'knowledge-based question',
  mca: 'more than one channel',
  pin: 'PIN',
  rba: 'risk-based check',
  retina: 'retina scan',
  sc: 'smart card',
  sms: 'code sent by SMS',
  tel: 'phone call',
  user: 'user presence test',
  vbm: 'voice',
  wia: 'Windows integrated authentication',
}

/** Kinds of factor (something known, held, or been): two kinds, or `mfa`, is a second factor. */
const SECOND_FACTOR = new Set(['otp', 'hwk', 'swk', 'sc', 'sms', 'tel', 'mfa', 'fpt', 'face'])

/** Times in seconds since the epoch (OpenID Connect Core §2), shown with their date too. */
const TIME_CLAIMS = new Set(['iat', 'exp', 'auth_time', 'nbf', 'updated_at'])

const shown = (name: string, value: unknown): string => {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && TIME_CLAIMS.has(name))
    return `${value} (${new Date(value * 1000).toISOString()})`
  return JSON.stringify(value)
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2)

function HowSignedIn({ amr, acr }: { amr: unknown; acr: unknown }) {
  const methods = Array.isArray(amr) ? amr.map(String) : []
  return (
    <div class="panel" id="try-amr">
      <h2>How the user signed in</h2>
      {methods.length ? (
        <ul class="links">
          {methods.map((m) => (
            <li>
              <code safe>{m}</code>: <span safe>{AMR_WORDS[m] ?? 'a method the sign-in reported'}</span>
            </li>
          ))}
        </ul>
      ) : (
        <p class="hint">No `amr`: the sign-in recorded no method (an external IdP that named none).</p>
      )}
      <p>
        {methods.some((m) => SECOND_FACTOR.has(m))
          ? 'A second factor was used.'
          : 'No second factor was used: the login policy did not ask for one, or the user has none.'}
      </p>
      <p>
        <strong>acr</strong>:{' '}
        {typeof acr === 'string' ? <code safe>{acr}</code> : <span class="hint">not set</span>}
      </p>
    </div>
  )
}

/** Where a try's page leads: another try, or back. */
function TryAgain({ workspaceId }: { workspaceId: string }) {
  return (
    <p>
      <TrySignInButton workspaceId={workspaceId} label="Try again" />{' '}
      <a class="btn secondary" href={`/app/workspaces/${workspaceId}`}>
        Back to the workspace
      </a>
    </p>
  )
}

/** The page a finished try lands on: what an app of this workspace receives, decoded. */
export function TryResultPage({
  w,
  user,
  nav,
  result,
}: {
  w: { id: string; name: string }
  user: ShellUser
  nav: readonly SidebarLink[]
  result: TryResult
}) {
  const { claims, userinfo } = result
  return (
    <WorkspacePage
      nav={nav}
      here="try"
      w={w}
      user={user}
      heading="Try sign-in: signed in"
      title="try sign-in"
      lead={
        <>
          A real sign-in at this workspace's hosted pages, through the dashboard's own client{' '}
          <code safe>{result.clientId}</code>. Its tokens were used once, here, and not kept.
        </>
      }
    >
      <TryAgain workspaceId={w.id} />
      <HowSignedIn amr={claims.amr} acr={claims.acr} />
      <div class="panel" id="try-claims">
        <h2>ID token claims</h2>
        <p class="hint">
          Signed with <code safe>{result.header.alg ?? '?'}</code>, key{' '}
          <code safe>{result.header.kid ?? '?'}</code>; verified against the instance's keys, issuer, audience
          and nonce.
        </p>
        <table>
          <thead>
            <tr>
              <th>Claim</th>
              <th>Value</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(claims).map(([name, value]) => (
              <tr>
                <td>
                  <code safe>{name}</code>
                </td>
                <td safe>{shown(name, value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <details>
          <summary>Raw JSON</summary>
          <pre class="secret" id="try-claims-json" safe>
            {pretty(claims)}
          </pre>
        </details>
      </div>
      <div class="panel" id="try-userinfo">
        <h2>Userinfo</h2>
        <p class="hint" safe>{`GET userinfo with the access token answered ${userinfo.status}.`}</p>
        <pre class="secret" id="try-userinfo-json" safe>
          {pretty(userinfo.body)}
        </pre>
      </div>
      <Alert kind="warn">
        The user you signed in with is a real user of this workspace: a sign-up here created them, and the
        sign-in counts toward the workspace's monthly active users like any other.
      </Alert>
    </WorkspacePage>
  )
}

/** The page of a try that did not finish (refused, expired, or tokens that failed a check). */
export function TryFailedPage({
  w,
  user,
  nav,
  message,
}: {
  w: { id: string; name: string }
  user: ShellUser
  nav: readonly SidebarLink[]
  message: string
}) {
  return (
    <WorkspacePage nav={nav} here="try" w={w} user={user} heading="Try sign-in" title="try sign-in">
      <Alert kind="error">
        <span safe>{message}</span>
      </Alert>
      <TryAgain workspaceId={w.id} />
    </WorkspacePage>
  )
}
