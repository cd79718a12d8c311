import type { Command } from 'commander'
import { act, examples } from '../command'
import { deviceLogin, revokeLogin } from '../device-login'

interface Me {
  kind: 'user' | 'machine_key'
  id: string
  email?: string
  name?: string
  workspace_id?: string
  scopes?: string[]
}

/**
 * Opens `url` in the desktop's browser when there is one (`open` on macOS, `xdg-open` with a
 * display elsewhere); on a server or over SSH nothing happens and the printed link is the way.
 */
function openBrowser(url: string): void {
  const hasDisplay = process.platform === 'darwin' || process.env.DISPLAY || process.env.WAYLAND_DISPLAY
  const opener = hasDisplay && Bun.which(process.platform === 'darwin' ? 'open' : 'xdg-open')
  if (!opener) return
  try {
    Bun.spawn([opener, url], { stdio: ['ignore', 'ignore', 'ignore'] }).unref()
  } catch {
    // The link is printed already; a browser that does not start changes nothing.
  }
}

const describeMe = (me: Me, baseUrl: string) =>
  me.kind === 'machine_key'
    ? `machine key ${me.id} of workspace ${me.workspace_id} (${me.scopes?.join(' ')}) on ${baseUrl}`
    : `${me.email} (${me.name}) on ${baseUrl}`

/** `login`, `logout`, `whoami`: a person's login on a server, kept in the config directory. */
export function registerAuth(program: Command): void {
  examples(
    program
      .command('login')
      .description('Sign in through the browser (device flow) and keep the login for this server')
      .option('--no-browser', 'only print the link and the code; open no browser')
      .action(
        act(async (ctx, opts) => {
          const login = await deviceLogin({
            api: ctx.anonymous(),
            say: (text) => ctx.out.note(text),
            openBrowser: opts.browser ? openBrowser : () => {},
          })
          ctx.store.save(ctx.baseUrl, login, true)
          const me = await ctx.api().get<Me>('/v1/auth/me')
          ctx.store.save(ctx.baseUrl, { ...login, email: me.email ?? null }, true)
          ctx.out.result(
            { base_url: ctx.baseUrl, ...me },
            () => `Logged in as ${describeMe(me, ctx.baseUrl)}`,
          )
        }),
      ),
    'gatehouse login',
    'gatehouse login --base-url https://auth.example.com',
  )

  examples(
    program
      .command('logout')
      .description("Forget this server's login (and revoke its refresh token)")
      .action(
        act(async (ctx) => {
          const login = ctx.store.get(ctx.baseUrl)
          // Revoking is a courtesy to the server; forgetting the login is what logout promises.
          if (login) await revokeLogin(login).catch(() => {})
          ctx.store.remove(ctx.baseUrl)
          ctx.out.result({ base_url: ctx.baseUrl, logged_out: Boolean(login) }, () =>
            login ? `Logged out of ${ctx.baseUrl}` : `Not logged in to ${ctx.baseUrl}`,
          )
        }),
      ),
    'gatehouse logout',
  )

  examples(
    program
      .command('whoami')
      .description('Show who the CLI calls the API as: your login, or the machine key of --key-file')
      .action(
        act(async (ctx) => {
          const me = await ctx.api().get<Me>('/v1/auth/me')
          ctx.out.result(me, () => describeMe(me, ctx.baseUrl))
        }),
      ),
    'gatehouse whoami',
    'gatehouse whoami --key-file ./key.json --json',
  )
}
