import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ManualClock } from '../src/shared/clock'
import { cspHash } from '../src/shared/security-headers'
import { solidPng, uploadLogo } from './support/branding'
import { type Caller, callApi, keyCaller, type Person, person } from './support/callers'
import { activeWorkspace } from './support/instances'
import { startTestServer, type TestServer } from './support/server'
import type { Json } from './support/users'

// SPEC "SMTP and branding", DESIGN "Branding", issue 30: a workspace's branding through the API,
// its logo sniffed, sanitised and served by the instance, and its look on the instance's pages.
const clock = new ManualClock(Date.now())
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({}, undefined, { clock })
})
afterAll(() => server.stop())

const api = (who: Caller, method: string, path: string, body?: unknown) =>
  callApi(server.baseUrl, who, method, path, body)
const brandingOf = (ws: string) => `/v1/workspaces/${ws}/branding`

async function workspaceWithOwner(): Promise<{ owner: Person; ws: string }> {
  const owner = await person(server.core)
  return { owner, ws: await activeWorkspace(server.core, owner.id) }
}

const auditOf = async (owner: Person, ws: string) =>
  (await api(owner, 'GET', `/v1/workspaces/${ws}/audit-log`)).body.items as Json[]

const PNG = solidPng(8, 4, [200, 30, 60])
const CLEAN_SVG = `<?xml version="1.0" encoding="UTF-8"?>
<!-- made by hand -->
<svg xmlns="http://www.w3.org/2000/svg" xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" viewBox="0 0 10 10" inkscape:version="1.3">
  <metadata><rdf>editor things</rdf></metadata>
  <defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs>
  <style>rect { fill: url(#g) }</style>
  <rect width="10" height="10" fill="url(#g)"/>
  <use href="#g"/>
  <text x="1" y="9">A &amp; B &lt;3</text>
</svg>`
/** What the clean SVG is served as: metadata, comments and editor attributes gone, the rest as parsed. */
const CLEAN_SVG_SANITISED = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">
  
  <defs><linearGradient id="g"><stop offset="0" stop-color="#fff"></stop></linearGradient></defs>
  <style>rect { fill: url(#g) }</style>
  <rect width="10" height="10" fill="url(#g)"></rect>
  <use href="#g"></use>
  <text x="1" y="9">A &amp; B &lt;3</text>
</svg>`

describe('branding', () => {
  it('starts empty, saves what is sent (colours in lower case, URLs as parsed), keeps what is omitted, clears with null, and audits each change', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const empty = await api(owner, 'GET', brandingOf(ws))
    expect(empty.status).toBe(200)
    expect(empty.body).toEqual({
      display_name: null,
      primary_color: null,
      background_color: null,
      text_color: null,
      privacy_policy_url: null,
      terms_url: null,
      logo_url: null,
    })
    const saved = await api(owner, 'PATCH', brandingOf(ws), {
      display_name: '  Acme Shop ',
      primary_color: '#0B5FFF',
      background_color: '#f7f7f2',
      text_color: '#111111',
      privacy_policy_url: 'https://Acme.example/privacy',
      terms_url: 'https://acme.example/terms?v=2',
    })
    expect(saved.status).toBe(200)
    expect(saved.body).toEqual({
      display_name: 'Acme Shop',
      primary_color: '#0b5fff',
      background_color: '#f7f7f2',
      text_color: '#111111',
      privacy_policy_url: 'https://acme.example/privacy',
      terms_url: 'https://acme.example/terms?v=2',
      logo_url: null,
    })
    const partial = await api(owner, 'PATCH', brandingOf(ws), { text_color: null, display_name: 'Acme' })
    expect(partial.body).toMatchObject({ display_name: 'Acme', text_color: null, primary_color: '#0b5fff' })
    expect((await api(owner, 'GET', brandingOf(ws))).body).toEqual(partial.body)

    const entries = (await auditOf(owner, ws)).filter((e) => e.action === 'branding.updated')
    expect(entries).toHaveLength(2)
    expect(entries[0]).toMatchObject({
      actor: `user:${owner.id}`,
      target: { type: 'branding', id: ws },
      changes: { display_name: { from: 'Acme Shop', to: 'Acme' }, text_color: { from: '#111111', to: null } },
    })
    // A PATCH that changes nothing writes nothing.
    await api(owner, 'PATCH', brandingOf(ws), { display_name: 'Acme' })
    expect((await auditOf(owner, ws)).filter((e) => e.action === 'branding.updated')).toHaveLength(2)
  })

  it('refuses colours that are not #rrggbb and links that are not https, at their field (422)', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const refused = async (body: Record<string, unknown>) => {
      const res = await api(owner, 'PATCH', brandingOf(ws), body)
      expect({ body, status: res.status }).toEqual({ body, status: 422 })
      return res.body.detail[0]
    }
    for (const colour of ['red', '#12345', '#1234567', '#gggggg', 'rgb(1,2,3)', '#fff;}body{x:url(a)'])
      expect(await refused({ primary_color: colour })).toMatchObject({
        loc: ['body', 'primary_color'],
        msg: 'Use a colour written #rrggbb, e.g. #4f46e5.',
      })
    for (const url of [
      'http://acme.example/privacy',
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'acme.example/privacy',
      'https://user:pw@acme.example/',
      ' JAVASCRIPT:alert(1)',
    ]) {
      const detail = await refused({ privacy_policy_url: url })
      expect(detail.loc).toEqual(['body', 'privacy_policy_url'])
      expect(detail.msg).toMatch(/https URL|user name/)
    }
    expect((await refused({ terms_url: 'ftp://acme.example/terms' })).loc).toEqual(['body', 'terms_url'])
    expect((await refused({ display_name: 'Acme\u202eevil' })).loc).toEqual(['body', 'display_name'])
    expect((await refused({ display_name: '   ' })).loc).toEqual(['body', 'display_name'])
    // Nothing was stored.
    expect((await api(owner, 'GET', brandingOf(ws))).body.primary_color).toBeNull()
  })

  it('refuses an SVG with a script, one with onload=, a 2 MiB PNG and a text file named .png, each with a clear 422', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const cases: [string, Uint8Array<ArrayBuffer> | string, string, string, RegExp][] = [
      [
        'script',
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><rect width="1" height="1"/></svg>',
        'logo.svg',
        'image/svg+xml',
        /SVG cannot be used: .*<script>/,
      ],
      [
        'onload',
        '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="1" height="1"/></svg>',
        'logo.svg',
        'image/svg+xml',
        /event handler attribute \(onload\)/,
      ],
      [
        '2 MiB PNG',
        new Uint8Array([...PNG.subarray(0, 8), ...new Uint8Array(2 * 1024 * 1024)]),
        'big.png',
        'image/png',
        /larger than 1 MiB/,
      ],
      [
        'text named .png',
        'just some text, not an image\n',
        'logo.png',
        'image/png',
        /PNG, JPEG, WebP or SVG/,
      ],
    ]
    for (const [, bytes, name, type, message] of cases) {
      const res = await uploadLogo(server.baseUrl, owner, ws, bytes, name, type)
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', 'logo'])
      expect(res.body.detail[0].msg).toMatch(message)
    }
    for (const svg of [
      '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div>x</div></foreignObject></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><image href="https://evil.example/x.png"/></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="https://evil.example/s.svg#a"/></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><style>@import "https://evil.example/a.css";</style></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:url(https://evil.example/p)}</style></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:url(http://evil.example/p)"/></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><a href="javascript:alert(1)"><rect/></a></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><SCRIPT>alert(1)</SCRIPT></svg>',
      // CSS escapes, comments and image functions (issue 56): url( and @import spelled otherwise.
      '<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:\\75rl(https://evil.example/p)}</style></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><style>@\\69mport "https://evil.example/a.css";</style></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><style>rect{background:image-set("https://evil.example/p" 1x)}</style></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:u&#114;l(https://evil.example/p)}</style></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><style>@font-face{font-family:x;src:url(https://evil.example/f)}</style></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:\\75rl(https://evil.example/p)"/></svg>',
      '<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:u/**/rl(https://evil.example/p)"/></svg>',
    ]) {
      const res = await uploadLogo(server.baseUrl, owner, ws, svg, 'logo.svg', 'image/svg+xml')
      expect({ svg, status: res.status }).toEqual({ svg, status: 422 })
      expect(res.body.detail[0].msg).toStartWith('This SVG cannot be used: ')
    }
    expect((await api(owner, 'GET', brandingOf(ws))).body.logo_url).toBeNull()
    expect((await auditOf(owner, ws)).filter((e) => e.action.startsWith('branding.'))).toEqual([])
  })

  it('keeps the styles a logo draws with (fill, stroke, fonts), rewritten without escapes, and drops the rest', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const logo =
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><style>.a { fill: #123456 } @media print { .a { fill: #000 } }</style>' +
      '<rect class="a" width="10" height="10" style="stroke:#abcdef;stroke-width:2;position:fixed"/>' +
      '<text style="font-family:&quot;Helvetica Neue&quot;, sans-serif;f\\6f nt-weight:700">A</text></svg>'
    const up = await uploadLogo(server.baseUrl, owner, ws, logo, 'logo.svg', 'image/svg+xml')
    expect(up.status).toBe(200)
    expect(await (await fetch(up.body.logo_url)).text()).toBe(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><style>.a { fill: #123456 }</style>' +
        '<rect class="a" width="10" height="10" style="stroke: #abcdef; stroke-width: 2"></rect>' +
        '<text style="font-family: &quot;Helvetica Neue&quot;, sans-serif; font-weight: 700">A</text></svg>',
    )
  })

  it('serves a clean PNG back byte for byte from the instance, typed by its content, with nosniff, a CSP that runs nothing, an ETag and a 304', async () => {
    const { owner, ws } = await workspaceWithOwner()
    // Named and declared as something else: the bytes decide.
    const up = await uploadLogo(server.baseUrl, owner, ws, PNG, 'logo.gif', 'text/html')
    expect(up.status).toBe(200)
    expect(up.body.logo_url).toMatch(new RegExp(`^${server.baseUrl}/i/${ws}/branding/logo\\?v=[0-9a-f]{32}$`))
    const res = await fetch(up.body.logo_url)
    expect(res.status).toBe(200)
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    const etag = res.headers.get('etag')
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/)
    const again = await fetch(up.body.logo_url, { headers: { 'if-none-match': etag! } })
    expect(again.status).toBe(304)
    expect(again.headers.get('etag')).toBe(etag)
    expect(await again.text()).toBe('')
    // The unversioned address is asked again each time.
    const plain = await fetch(`${server.baseUrl}/i/${ws}/branding/logo`)
    expect(plain.headers.get('cache-control')).toBe('no-cache')
    expect(plain.headers.get('etag')).toBe(etag)

    const entry = (await auditOf(owner, ws)).find((e) => e.action === 'branding.logo_uploaded')
    expect(entry).toMatchObject({
      actor: `user:${owner.id}`,
      target: { type: 'branding', id: ws },
      changes: { type: { to: 'image/png' }, size: { to: PNG.byteLength } },
    })
  })

  it('serves a clean SVG as sanitised (editor metadata dropped), typed image/svg+xml, sandboxed; a new logo is a new URL; DELETE removes it', async () => {
    const { owner, ws } = await workspaceWithOwner()
    const up = await uploadLogo(server.baseUrl, owner, ws, CLEAN_SVG, 'logo.png', 'image/png')
    expect(up.status).toBe(200)
    const res = await fetch(up.body.logo_url)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(CLEAN_SVG_SANITISED)
    expect(res.headers.get('content-type')).toBe('image/svg+xml')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    )
    const etag = res.headers.get('etag')!
    expect((await fetch(up.body.logo_url, { headers: { 'if-none-match': `W/${etag}` } })).status).toBe(304)

    const png = await uploadLogo(server.baseUrl, owner, ws, PNG, 'logo.png', 'image/png')
    expect(png.body.logo_url).not.toBe(up.body.logo_url)
    const replaced = await fetch(png.body.logo_url, { headers: { 'if-none-match': etag } })
    expect(replaced.status).toBe(200)
    expect(replaced.headers.get('content-type')).toBe('image/png')

    for (let i = 0; i < 2; i++) {
      const removed = await api(owner, 'DELETE', `${brandingOf(ws)}/logo`)
      expect(removed.status).toBe(200)
      expect(removed.body.logo_url).toBeNull()
    }
    expect((await fetch(png.body.logo_url)).status).toBe(404)
    const actions = (await auditOf(owner, ws)).map((e) => e.action).filter((a) => a.startsWith('branding.'))
    expect(actions).toEqual(['branding.logo_removed', 'branding.logo_uploaded', 'branding.logo_uploaded'])
  })

  it("draws the instance's pages with its brand at once: name escaped, colours allowed by the policy's hash, legal links; another workspace keeps the platform's look", async () => {
    const { owner, ws } = await workspaceWithOwner()
    const { ws: other } = await workspaceWithOwner()
    const page = (w: string) => fetch(`${server.baseUrl}/i/${w}/forgot-password`)
    const before = await (await page(ws)).text()
    expect(before).not.toContain('class="brand"')

    const name = '<script>alert("x")</script> & Co'
    await api(owner, 'PATCH', brandingOf(ws), {
      display_name: name,
      primary_color: '#aa0044',
      privacy_policy_url: 'https://acme.example/privacy?a=1&b="2"',
    })
    await uploadLogo(server.baseUrl, owner, ws, PNG, 'logo.png')
    const res = await page(ws)
    const html = await res.text()
    expect(html).not.toContain('<script>alert')
    expect(html).toContain('<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co</p>')
    expect(html).toContain('<title>Reset your password · &lt;script&gt;')
    const style = ':root{--brand-primary:#aa0044}'
    expect(html).toContain(`<style>${style}</style>`)
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toContain(cspHash(style))
    expect(csp).not.toContain('unsafe-inline')
    const view = (await api(owner, 'GET', brandingOf(ws))).body
    // The logo is served on the page's own origin, like the icon the layout links.
    expect(csp).toContain(`img-src 'self';`)
    expect(view.logo_url).toStartWith(`${server.baseUrl}/i/${ws}/branding/logo?`)
    expect(html).toContain(`src="${view.logo_url}"`)
    expect(html).toContain('href="https://acme.example/privacy?a=1&b=%222%22"')

    // oidc-provider's own pages (the device code form, the signed-out page, its error page) and
    // the page router's error page wear it too: they are drawn inside the instance's dispatch.
    for (const path of [
      '/device',
      '/session/end/success',
      '/interaction/gone-away',
      '/auth?client_id=nobody',
    ]) {
      const other = await fetch(`${server.baseUrl}/i/${ws}${path}`, { headers: { accept: 'text/html' } })
      const body = await other.text()
      expect({
        path,
        branded: body.includes('<p>&lt;script&gt;alert') && body.includes(`<style>${style}</style>`),
      }).toEqual({ path, branded: true })
      expect(other.headers.get('content-security-policy')).toContain(cspHash(style))
    }

    const untouched = await page(other)
    const otherHtml = await untouched.text()
    expect(otherHtml).not.toContain('brand-primary:')
    expect(otherHtml).not.toContain('class="brand"')
    expect(untouched.headers.get('content-security-policy')).not.toContain(cspHash(style))
    // Another workspace's logo address has none.
    expect((await fetch(`${server.baseUrl}/i/${other}/branding/logo`)).status).toBe(404)
  })

  it('lets a read key read and refuses it a change; a write key changes it', async () => {
    const { ws } = await workspaceWithOwner()
    const reader = await keyCaller(server.core, ws, ['workspace:read'])
    const writer = await keyCaller(server.core, ws, ['workspace:write'])
    expect((await api(reader, 'GET', brandingOf(ws))).status).toBe(200)
    expect((await api(reader, 'PATCH', brandingOf(ws), { display_name: 'X' })).status).toBe(403)
    expect((await uploadLogo(server.baseUrl, reader, ws, PNG, 'l.png')).status).toBe(403)
    expect((await api(writer, 'PATCH', brandingOf(ws), { display_name: 'X' })).status).toBe(200)
    expect((await uploadLogo(server.baseUrl, writer, ws, PNG, 'l.png')).status).toBe(200)
  })
})
