import { Layout } from '../../shared/views/hosted-layout'
import { prefersHtml } from '../errors'
import { issuerFor } from '../instances'
import { instanceLabel } from '../mfa/instance-label'
import type { PageContext, PageRequest } from './http'

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
export async function issuerHome({ core, extensions }: PageContext, p: PageRequest) {
  const issuer = issuerFor(core.config, p.instance.id)
  if (!prefersHtml(p.req.headers.accept ?? '')) {
    const pointer = { issuer, openid_configuration: `${issuer}${DISCOVERY}`, jwks_uri: `${issuer}${JWKS}` }
    p.res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    p.res.end(JSON.stringify(pointer))
    return
  }
  const name = await instanceLabel(core, extensions, p.instance.id)
  p.res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
  p.res.end(await IssuerPage({ name, issuer }))
}
