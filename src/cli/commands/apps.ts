import { type Command, Option } from 'commander'
import { act, collect, commandGroup, examples, listCommand, wholeNumber } from '../command'
import { CliError, EXIT } from '../exit-codes'
import type { Column } from '../output'

interface App {
  id: string
  name: string
  client_id: string
  app_type: string
  redirect_uris: string[]
  post_logout_redirect_uris: string[]
  dev_mode: boolean
}

const COLUMNS: Column<App>[] = [
  ['ID', (a) => a.id],
  ['NAME', (a) => a.name],
  ['TYPE', (a) => a.app_type],
  ['CLIENT_ID', (a) => a.client_id],
  ['REDIRECT_URIS', (a) => a.redirect_uris],
]

/** The options of an app's settings, on `create` and `update`. */
function settings(command: Command): Command {
  return command
    .option('--redirect-uri <uri>', 'a redirect URI (repeat, or separate with commas)', collect)
    .option('--post-logout-uri <uri>', 'a post-logout redirect URI (repeat, or commas)', collect)
    .option('--dev-mode', 'allow http://localhost and http://127.0.0.1 redirect URIs')
}

/** `apps list|create|get|update|delete|rotate-secret`: the OIDC applications of a workspace. */
export function registerApps(program: Command): void {
  const group = commandGroup(
    program,
    'apps',
    "A workspace's OIDC applications",
    'gatehouse apps list -w Acme',
  )

  listCommand(group, 'List the apps of the workspace', '/apps', COLUMNS)

  examples(
    settings(
      group
        .command('create')
        .description('Create an app; a web app’s client secret is shown this once')
        .argument('<name>', 'its name')
        .addOption(
          new Option('--type <type>', 'web (confidential), spa or native (public, PKCE)')
            .choices(['web', 'spa', 'native'])
            .default('web'),
        ),
    ).action(
      act(async (ctx, opts, name) => {
        if (!opts.redirectUri?.length) throw new CliError('create needs --redirect-uri <uri>', EXIT.USAGE)
        const created = await ctx
          .api()
          .post<{ client_secret: string | null }>(await ctx.workspacePath('/apps'), {
            name,
            app_type: opts.type,
            redirect_uris: opts.redirectUri,
            ...(opts.postLogoutUri ? { post_logout_redirect_uris: opts.postLogoutUri } : {}),
            ...(opts.devMode ? { dev_mode: true } : {}),
          })
        ctx.out.record(created)
        if (created.client_secret && !ctx.out.json)
          ctx.out.note('The client secret is shown this once: keep it now.')
      }),
    ),
    'gatehouse apps create "Web shop" --redirect-uri https://shop.example.com/callback -w Acme',
    'gatehouse apps create SPA --type spa --dev-mode --redirect-uri http://localhost:5173/cb --json',
  )

  examples(
    group
      .command('get')
      .description('Show an app (never its secret)')
      .argument('<app_id>')
      .action(
        act(async (ctx, _opts, appId) => {
          ctx.out.record(await ctx.api().get(await ctx.workspacePath(`/apps/${appId}`)))
        }),
      ),
    'gatehouse apps get app_01J… -w Acme',
  )

  examples(
    settings(
      group
        .command('update')
        .description('Change an app: the lists given replace the current ones')
        .argument('<app_id>')
        .option('--name <name>', 'its new name')
        .option('--no-dev-mode', 'refuse loopback redirect URIs again'),
    ).action(
      act(async (ctx, opts, appId) => {
        const body = {
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.redirectUri ? { redirect_uris: opts.redirectUri } : {}),
          ...(opts.postLogoutUri ? { post_logout_redirect_uris: opts.postLogoutUri } : {}),
          ...(opts.devMode !== undefined ? { dev_mode: opts.devMode } : {}),
        }
        if (!Object.keys(body).length)
          throw new CliError(
            'nothing to change: give --name, --redirect-uri, --post-logout-uri or --[no-]dev-mode',
            EXIT.USAGE,
          )
        ctx.out.record(await ctx.api().patch(await ctx.workspacePath(`/apps/${appId}`), body))
      }),
    ),
    'gatehouse apps update app_01J… --redirect-uri https://a.example.com/cb,https://b.example.com/cb',
  )

  examples(
    group
      .command('delete')
      .description('Delete an app (done already is fine)')
      .argument('<app_id>')
      .action(
        act(async (ctx, _opts, appId) => {
          const answer = await ctx.api().delete(await ctx.workspacePath(`/apps/${appId}`))
          ctx.out.result(answer, () => `Deleted app ${appId}`)
        }),
      ),
    'gatehouse apps delete app_01J… -w Acme',
  )

  examples(
    group
      .command('rotate-secret')
      .description('Give a web app a new client secret (shown this once)')
      .argument('<app_id>')
      .addOption(
        new Option('--grace-hours <hours>', 'keep accepting the previous secret this long (0 to 24)')
          .default(0)
          .argParser(wholeNumber(0)),
      )
      .action(
        act(async (ctx, opts, appId) => {
          const path = await ctx.workspacePath(`/apps/${appId}/rotate-secret`)
          ctx.out.record(await ctx.api().post(path, { grace_hours: opts.graceHours }))
          if (!ctx.out.json) ctx.out.note('The new client secret is shown this once: keep it now.')
        }),
      ),
    'gatehouse apps rotate-secret app_01J… --grace-hours 24',
  )
}
