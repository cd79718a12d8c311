import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SECRET_PLACEHOLDER } from '../src/features/apps/quickstarts'
import { Agent } from './support/browserless'
import { startTestServer, type TestServer } from './support/server'
import { tempDir } from './support/temp'
import { type Json, json, type PlatformUser, signUpEndUser, signUpUser, workspaceFor } from './support/users'

// Issue 57 item 3: an app's page carries quickstarts filled in with its issuer and client id, each
// code that runs. The snippets are taken from the page as a browser gets it (unescaped), written to
// a folder of their own and run: the Express app's OpenID Connect module (openid-client; Express is
// not installed here, its routes only call that module) and the CLI with PKCE and a loopback
// redirect, each through a real authorization code flow on the hosted pages; the SPA's is
// type-checked against oidc-client-ts; the Next.js one (next-auth is not installed) is parsed.

let server: TestServer
let owner: PlatformUser
let ws: { id: string; auth_url: string }

beforeAll(async () => {
  server = await startTestServer()
  owner = await signUpUser(server, { email: 'dev@example.com', password: 'dev-password-12', name: 'Dev' })
  ws = await workspaceFor(owner, 'Quickstarts')
})
afterAll(() => server.stop())

const ROOT = join(import.meta.dir, '..')

async function newApp(body: Record<string, unknown>): Promise<Json> {
  const r = await json(owner.agent, 'POST', `/v1/workspaces/${ws.id}/apps`, body)
  expect(r.status).toBe(201)
  return r.body
}

const htmlText = (html: string) =>
  html
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCharCode(Number.parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')

/** The app's page, and the files of its quickstarts as shown there, by `<quickstart id>-<n>`. */
async function pageOf(appId: string): Promise<{ html: string; file: (id: string) => string }> {
  const res = await owner.agent.request(`/app/workspaces/${ws.id}/apps/${appId}`)
  expect(res.status).toBe(200)
  const html = await res.text()
  const file = (id: string) => {
    const found = new RegExp(`<pre class="snippet" id="qs-${id}"><code>([\\s\\S]*?)</code></pre>`).exec(html)
    if (!found) throw new Error(`no snippet qs-${id} on the page`)
    return htmlText(found[1]!)
  }
  return { html, file }
}

/** A folder for snippets, which resolves packages as this project does. */
function snippetDir(files: Record<string, string>): string {
  const dir = tempDir('gatehouse-quickstart-')
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  for (const [name, code] of Object.entries(files)) writeFileSync(join(dir, name), code)
  return dir
}

describe("an app page's quickstarts", () => {
  it('Express + openid-client: its auth module signs a user in through the hosted pages', async () => {
    const app = await newApp({ name: 'Express shop', redirect_uris: ['https://shop.example.com/callback'] })
    const { html, file } = await pageOf(app.id)
    const auth = file('express-0')
    expect(auth).toContain(JSON.stringify(ws.auth_url))
    expect(auth).toContain(JSON.stringify(app.client_id))
    // The secret is never on the page after its reveal: the .env block has the placeholder.
    expect(html).not.toContain(app.client_secret)
    expect(file('env-0')).toContain(`OIDC_CLIENT_SECRET=${SECRET_PLACEHOLDER}`)
    new Bun.Transpiler({ loader: 'js' }).transformSync(file('express-1'))

    const dir = snippetDir({ 'auth.mjs': auth })
    // What the .env block holds, but the issuer and client id: those the snippet has filled in.
    process.env.OIDC_CLIENT_SECRET = app.client_secret
    const mod = await import(join(dir, 'auth.mjs'))
    delete process.env.OIDC_CLIENT_SECRET

    const { url, pending } = await mod.startSignIn()
    expect(url).toStartWith(`${ws.auth_url}/auth?`)
    const user = { email: 'shopper@example.com', password: 'shopper-pass-1', name: 'Shopper' }
    const back = await signUpEndUser(
      new Agent(server.baseUrl),
      url,
      user,
      'https://shop.example.com/callback',
    )
    const signedIn = await mod.finishSignIn(back.href, pending)
    expect(signedIn.user).toMatchObject({ iss: ws.auth_url, aud: app.client_id, email: user.email })
    expect(mod.signOutUrl(signedIn.idToken)).toStartWith(`${ws.auth_url}/session/end?`)
  })

  it('native CLI: PKCE and a loopback redirect on a port of the moment, run as a process', async () => {
    const app = await newApp({
      name: 'CLI',
      app_type: 'native',
      redirect_uris: ['http://127.0.0.1/callback'],
    })
    const { file } = await pageOf(app.id)
    const dir = snippetDir({ 'cli.mjs': file('native-0') })
    const cli = Bun.spawn([process.execPath, 'cli.mjs'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
    const reader = cli.stdout.getReader()
    let out = ''
    while (!out.includes('\nhttp')) {
      const { value, done } = await reader.read()
      if (done)
        throw new Error(
          `the CLI ended before it asked to sign in: ${out}${await new Response(cli.stderr).text()}`,
        )
      out += new TextDecoder().decode(value)
    }
    const url = new URL(out.slice(out.indexOf('\nhttp') + 1).split('\n')[0]!)
    expect(`${url.origin}${url.pathname}`).toBe(`${ws.auth_url}/auth`)
    const redirect = url.searchParams.get('redirect_uri')!
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)

    const user = { email: 'terminal@example.com', password: 'terminal-pass-1', name: 'Terminal' }
    const back = await signUpEndUser(new Agent(server.baseUrl), url, user, redirect)
    const page = await fetch(back)
    expect(await page.text()).toContain('Signed in')
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    expect(await cli.exited).toBe(0)
    expect(out).toContain(`Signed in as ${user.email}`)
  }, 30_000)

  it('SPA + oidc-client-ts: type-checks against the library, filled in with the app', async () => {
    const app = await newApp({
      name: 'SPA',
      app_type: 'spa',
      redirect_uris: ['https://spa.example.com/cb'],
      post_logout_redirect_uris: ['https://spa.example.com/bye'],
    })
    const { html, file } = await pageOf(app.id)
    const code = file('spa-0')
    for (const value of [
      ws.auth_url,
      app.client_id,
      'https://spa.example.com/cb',
      'https://spa.example.com/bye',
    ])
      expect(code).toContain(JSON.stringify(value))
    // A public client has no secret, anywhere on its page.
    expect(html).not.toContain('OIDC_CLIENT_SECRET')
    const options = {
      strict: true,
      noEmit: true,
      target: 'es2022',
      module: 'esnext',
      moduleResolution: 'bundler',
      lib: ['es2022', 'dom'],
      types: [],
      skipLibCheck: true,
    }
    const dir = snippetDir({
      'auth.ts': code,
      'tsconfig.json': JSON.stringify({ compilerOptions: options, files: ['auth.ts'] }),
    })
    const tsc = Bun.spawnSync([process.execPath, join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], {
      cwd: dir,
    })
    expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe('')
    expect(tsc.exitCode).toBe(0)
  }, 30_000)

  it('Next.js + Auth.js: its files parse, filled in with the issuer and client id', async () => {
    const app = await newApp({
      name: 'Next',
      redirect_uris: ['https://next.example.com/api/auth/callback/gatehouse'],
    })
    const { file } = await pageOf(app.id)
    const auth = file('nextjs-0')
    expect(auth).toContain(JSON.stringify(ws.auth_url))
    expect(auth).toContain(JSON.stringify(app.client_id))
    new Bun.Transpiler({ loader: 'ts' }).transformSync(auth)
    new Bun.Transpiler({ loader: 'ts' }).transformSync(file('nextjs-1'))
    new Bun.Transpiler({ loader: 'tsx' }).transformSync(file('nextjs-2'))
  })
})
