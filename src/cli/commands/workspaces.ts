import { createInterface } from 'node:readline/promises'
import { type Command, Option } from 'commander'
import { act, commandGroup, examples, wholeNumber } from '../command'
import type { CliContext } from '../context'
import { CliError, EXIT } from '../exit-codes'
import type { Column } from '../output'

interface Workspace {
  id: string
  name: string
  state: 'provisioning' | 'provisioning_failed' | 'active' | 'deleting'
  plan: string
  auth_url: string
  created_at: string
  provisioning_error: string | null
}

const COLUMNS: Column<Workspace>[] = [
  ['ID', (w) => w.id],
  ['NAME', (w) => w.name],
  ['STATE', (w) => w.state],
  ['PLAN', (w) => w.plan],
  ['CREATED', (w) => w.created_at],
]
const FIELDS = ['id', 'name', 'state', 'plan', 'auth_url', 'created_at', 'provisioning_error']
/** Seconds between reads of a provisioning workspace: within its 60 calls a minute. */
const POLL_MS = 1000

/** Reads the workspace until it is `active`, with a spinner on a terminal; exit 1 when it failed. */
async function untilActive(ctx: CliContext, created: Workspace, timeoutS: number): Promise<Workspace> {
  const started = Date.now()
  return ctx.out.progress(`Provisioning ${created.name}…`, async (update) => {
    let ws = created
    for (;;) {
      if (ws.state === 'active') return ws
      if (ws.state !== 'provisioning')
        throw new CliError(`workspace ${ws.id} is ${ws.state}: ${ws.provisioning_error ?? 'no reason given'}`)
      const waited = (Date.now() - started) / 1000
      if (waited > timeoutS)
        throw new CliError(
          `workspace ${ws.id} is still provisioning after ${timeoutS} s: see \`gatehouse workspaces get ${ws.id}\``,
        )
      update(`Provisioning ${created.name}… ${Math.round(waited)} s`)
      await Bun.sleep(POLL_MS)
      ws = await ctx.api().get<Workspace>(`/v1/workspaces/${ws.id}`)
    }
  })
}

/** Asks for the workspace's name at the terminal (on stderr, so stdout stays the result). */
async function typedName(name: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    return (await rl.question(`Type the workspace's name (${name}) to delete it: `)).trim()
  } finally {
    rl.close()
  }
}

/** `workspaces list|create|get|rename|delete`. */
export function registerWorkspaces(program: Command): void {
  const group = commandGroup(
    program,
    'workspaces',
    'Your workspaces (one identity instance each)',
    'gatehouse workspaces list',
    'gatehouse workspaces create "Acme"',
  )

  examples(
    group
      .command('list')
      .description('List the workspaces you are a member of (with --key-file: the key’s own)')
      .action(
        act(async (ctx) => {
          const answer = ctx.keyAuth
            ? { items: [await ctx.api().get<Workspace>(await ctx.workspacePath())], total: 1 }
            : await ctx.api().get<{ items: Workspace[]; total: number }>('/v1/workspaces')
          ctx.out.list(
            answer,
            COLUMNS,
            'No workspaces yet: create one with `gatehouse workspaces create <name>`.',
          )
        }),
      ),
    'gatehouse workspaces list',
    'gatehouse workspaces list --json | jq -r ".items[].id"',
  )

  examples(
    group
      .command('create')
      .description('Create a workspace and wait until it is active')
      .argument('<name>', 'its name (1 to 100 characters)')
      .option('--no-wait', 'answer at once, while it is still provisioning')
      .addOption(
        new Option('--timeout <seconds>', 'give up waiting after this long (exit 1)')
          .default(300)
          .argParser(wholeNumber(1)),
      )
      .action(
        act(async (ctx, opts, name) => {
          const created = await ctx.api().post<Workspace>('/v1/workspaces', { name })
          const ws = opts.wait ? await untilActive(ctx, created, opts.timeout) : created
          ctx.out.record({ ...ws }, FIELDS)
        }),
      ),
    'gatehouse workspaces create "Acme"',
    'gatehouse workspaces create "Acme" --no-wait --json',
  )

  examples(
    group
      .command('get')
      .description('Show a workspace')
      .argument('[workspace]', 'its id or name (default: --workspace, or the key file’s)')
      .action(
        act(async (ctx, _opts, workspace) => {
          ctx.out.record(await ctx.api().get(await ctx.workspacePath('', workspace)), FIELDS)
        }),
      ),
    'gatehouse workspaces get 0b7f5d0e-3c1a-4a53-9a8e-2f1f0e6c8d11',
    'gatehouse workspaces get Acme --json',
  )

  examples(
    group
      .command('rename')
      .description('Rename a workspace')
      .argument('<workspace>', 'its id or current name')
      .argument('<name>', 'the new name')
      .action(
        act(async (ctx, _opts, workspace, name) => {
          const path = await ctx.workspacePath('', workspace)
          ctx.out.record(await ctx.api().patch(path, { name }), FIELDS)
        }),
      ),
    'gatehouse workspaces rename Acme "Acme Corp"',
  )

  examples(
    group
      .command('delete')
      .description('Delete a workspace: asks for its name, unless --confirm gives it')
      .argument('[workspace]', 'its id or name (default: --workspace, or the key file’s)')
      .option('--confirm <name>', "the workspace's exact name, for scripts (no question asked)")
      .action(
        act(async (ctx, opts, workspace) => {
          const path = await ctx.workspacePath('', workspace)
          const ws = await ctx.api().get<Workspace>(path)
          let confirm: string | undefined = opts.confirm
          if (confirm === undefined) {
            if (!process.stdin.isTTY)
              throw new CliError(
                `deleting needs --confirm "${ws.name}" when no one is at the terminal`,
                EXIT.USAGE,
              )
            confirm = await typedName(ws.name)
          }
          if (confirm !== ws.name)
            throw new CliError(`"${confirm}" is not the workspace's name ("${ws.name}"): nothing deleted`)
          const deleted = await ctx.api().delete<{ id: string; state: string }>(path, { confirm })
          ctx.out.result(
            deleted,
            () =>
              `Deleting ${ws.name} (${ws.id}): its instance stops now, its data is purged in the background`,
          )
        }),
      ),
    'gatehouse workspaces delete Acme',
    'gatehouse workspaces delete 0b7f5d0e-3c1a-4a53-9a8e-2f1f0e6c8d11 --confirm "Acme"',
  )
}
