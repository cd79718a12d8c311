// A tiny cookie-keeping HTTP agent: drives hosted login forms over plain HTTP, following
// redirects by hand so tests can stop at the relying party's redirect_uri.

export class Agent {
  /** Keyed by name and path, as a browser keeps them: two instances' `_interaction` cookies coexist. */
  private readonly jar = new Map<string, { name: string; value: string; path: string }>()

  constructor(private readonly origin: string) {}

  /** The Cookie header this agent sends to `url`. */
  cookieHeader(url: URL): string {
    return [...this.jar.values()]
      .filter((c) => url.pathname.startsWith(c.path))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ')
  }

  private store(res: Response) {
    for (const raw of res.headers.getSetCookie()) {
      const [pair, ...attrs] = raw.split(';')
      const [name, ...rest] = pair!.split('=')
      const path =
        attrs
          .map((a) => a.trim())
          .find((a) => a.toLowerCase().startsWith('path='))
          ?.slice(5) ?? '/'
      const expired = attrs.some((a) => /max-age=0|expires=thu, 01 jan 1970/i.test(a.trim()))
      const key = `${name!.trim()} ${path}`
      if (expired || rest.join('=') === '') this.jar.delete(key)
      else this.jar.set(key, { name: name!.trim(), value: rest.join('='), path })
    }
  }

  cookie(name: string): string | undefined {
    return [...this.jar.values()].find((c) => c.name === name)?.value
  }

  async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url, this.origin)
    const headers = new Headers(init.headers)
    const cookie = this.cookieHeader(target)
    if (cookie) headers.set('cookie', cookie)
    const res = await fetch(target, { ...init, headers, redirect: 'manual' })
    this.store(res)
    return res
  }

  /** Follows redirects until a non-redirect answer or a URL for which `stop` returns true. */
  async follow(
    url: string | URL,
    init: RequestInit = {},
    stop: (u: URL) => boolean = () => false,
  ): Promise<{ res: Response; url: URL }> {
    let current = new URL(url, this.origin)
    let res = await this.request(current, init)
    for (let i = 0; i < 20 && res.status >= 300 && res.status < 400; i++) {
      current = new URL(res.headers.get('location')!, current)
      if (stop(current)) return { res, url: current }
      res = await this.request(current)
    }
    return { res, url: current }
  }

  /** Submits an HTML form found in `html` (by action substring) with the given fields. */
  async submit(
    html: string,
    pageUrl: URL,
    actionIncludes: string,
    fields: Record<string, string>,
    stop?: (u: URL) => boolean,
  ) {
    const forms = [...html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)]
    const form = forms.find((f) => f[1]!.includes(actionIncludes))
    if (!form) throw new Error(`no form with action containing ${actionIncludes} in:\n${html.slice(0, 500)}`)
    const body = new URLSearchParams()
    for (const input of form[2]!.matchAll(/<input\b([^>]*)>/g)) {
      const name = /\bname="([^"]+)"/.exec(input[1]!)?.[1]
      const value = /\bvalue="([^"]*)"/.exec(input[1]!)?.[1]
      if (name && value !== undefined) body.set(name, value.replace(/&amp;/g, '&'))
    }
    for (const [k, v] of Object.entries(fields)) body.set(k, v)
    return this.follow(
      new URL(form[1]!.replace(/&amp;/g, '&'), pageUrl),
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: body.toString(),
      },
      stop,
    )
  }
}
