import { Elysia } from 'elysia'
import { prefersHtml } from '../../shared/accept'
import { Layout } from '../../shared/views/hosted-layout'
import { hostedHtml, hostedPage } from '../engine/hosted'
import { issuerFor } from '../instances'
import { instanceLabel } from '../mfa/instance-label'
import type { PageContext } from './http'

const DISCOVERY = '/.well-known/openid-configuration'
const JWKS = '/jwks'

function IssuerPage(p: { name: string; issuer: string }) {
  return (
    <Layout title={p.name}>
      <h1 safe>{p.name}</h1>
      <p class="sub">
        This is the sign-in address (OpenID Connect issuer) of <strong safe>{p.name}</strong>. Applications
        send their users here to sign in; there is nothing to do on this page itself.
      </p>
      <p>
        <a href={`${p.issuer}${DISCOVERY}`}>OpenID configuration (discovery)</a>
      </p>
      <p>
        <a href={`${p.issuer}${JWKS}`}>Signing keys (JWKS)</a>
      </p>
      <p class="hint" safe>
        {p.issuer}
      </p>
    </Layout>
  )
}

/**
 * `GET {auth_url}` (with or without its trailing slash): the issuer URL a developer pastes into a
 * browser gets a page naming the workspace and linking its documents, not oidc-provider's "Not
 * found"; an API client gets where those documents are. An instance that does not serve never gets
 * here: the dispatcher answers its not-found first.
 */
export const issuerPage = ({ core, extensions }: PageContext) =>
  new Elysia({ name: 'issuer-page' }).use(hostedPage('hosted-page')).get('/', async ({ hosted, request }) => {
    const issuer = issuerFor(core.config, hosted.instance.id)
    if (!prefersHtml(request.headers.get('accept') ?? '')) {
      const pointer = { issuer, openid_configuration: `${issuer}${DISCOVERY}`, jwks_uri: `${issuer}${JWKS}` }
      return Response.json(pointer, { headers: { 'cache-control': 'no-store' } })
    }
    const name = await instanceLabel(core, extensions, hosted.instance.id)
    return hostedHtml(<IssuerPage name={name} issuer={issuer} />)
  })
