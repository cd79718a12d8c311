import { chmodSync, existsSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Command } from 'commander'
import { act, collect, commandGroup, examples, listCommand } from '../command'
import type { CliContext } from '../context'
import { CliError, EXIT } from '../exit-codes'
import type { KeyFile } from '../key-auth'
import type { Column } from '../output'

interface MachineKey {
  id: string
  name: string
  scopes: string[]
  expires_at: string | null
  created_at: string
  last_used_at: string | null
  status: string
  revokes_at: string | null
}

const COLUMNS: Column<MachineKey>[] = [
  ['ID', (k) => k.id],
  ['NAME', (k) => k.name],
  ['SCOPES', (k) => k.scopes],
  ['STATUS', (k) => (k.revokes_at ? `${k.status} until ${k.revokes_at}` : k.status)],
  ['EXPIRES', (k) => k.expires_at ?? 'never'],
  ['LAST_USED', (k) => k.last_used_at],
]

/** Where a new key file goes: --out, else `<key id>.json` here, decided before the key exists. */
function keyFilePath(out: string | undefined): (keyId: string) => string {
  if (out && existsSync(out)) throw new CliError(`${out} exists already: choose another --out`, EXIT.USAGE)
  return (keyId) => resolve(out ?? `${keyId}.json`)
}

/**
 * Writes the key file a creation or rotation answered: 0600, never over an existing file. A key
 * whose file cannot be written is revoked again (its secret would be lost), and the command fails.
 */
async function saveKey(
  ctx: CliContext,
  created: MachineKey & { key: KeyFile },
  pathFor: (keyId: string) => string,
): Promise<void> {
  const path = pathFor(created.id)
  const { key, ...record } = created
  try {
    writeFileSync(path, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
    chmodSync(path, 0o600)
  } catch (e) {
    await ctx.api().delete(await ctx.workspacePath(`/machine-keys/${created.id}`))
    throw new CliError(`cannot write ${path} (${(e as Error).message}): key ${created.id} revoked again`)
  }
  ctx.out.result({ ...record, key_file: path }, () => path)
  if (!ctx.out.json)
    ctx.out.note(`Key ${created.id} written to ${path} (mode 0600); its secret is nowhere else.`)
}

/** `keys create|list|rotate|revoke`: a workspace's machine keys and their key files. */
export function registerKeys(program: Command): void {
  const group = commandGroup(
    program,
    'keys',
    "A workspace's machine keys (non-human credentials)",
    'gatehouse keys list -w Acme',
  )

  examples(
    group
      .command('create')
      .description('Create a machine key, write its key file (mode 0600) and print the path')
      .argument('<name>', 'what the key is for')
      .option(
        '--scope <scope>',
        'workspace:read|write|admin or tenant:<slug>:read|write (repeat, or commas)',
        collect,
      )
      .option('--expires-at <time>', 'ISO 8601 with a zone, e.g. 2027-01-31T00:00:00Z (default: never)')
      .option('--out <path>', 'where to write the key file (default: ./<key id>.json)')
      .action(
        act(async (ctx, opts, name) => {
          if (!opts.scope?.length) throw new CliError('create needs --scope <scope>', EXIT.USAGE)
          const pathFor = keyFilePath(opts.out)
          const created = await ctx
            .api()
            .post<MachineKey & { key: KeyFile }>(await ctx.workspacePath('/machine-keys'), {
              name,
              scopes: opts.scope,
              expires_at: opts.expiresAt ?? null,
            })
          await saveKey(ctx, created, pathFor)
        }),
      ),
    'gatehouse keys create deploy-bot --scope workspace:write -w Acme',
    'SERVICE_MACHINE_KEY_PATH=$(gatehouse keys create ci --scope workspace:read --out ci.json) gatehouse apps list',
  )

  listCommand(
    group,
    'List the machine keys: active, rotating and expired (never a secret)',
    '/machine-keys',
    COLUMNS,
  )

  examples(
    group
      .command('rotate')
      .description('Replace a key: a new key file now, the old key works 24 h more')
      .argument('<key_id>')
      .option('--out <path>', 'where to write the new key file (default: ./<new key id>.json)')
      .action(
        act(async (ctx, opts, keyId) => {
          const pathFor = keyFilePath(opts.out)
          const created = await ctx
            .api()
            .post<MachineKey & { key: KeyFile }>(await ctx.workspacePath(`/machine-keys/${keyId}/rotate`))
          await saveKey(ctx, created, pathFor)
        }),
      ),
    'gatehouse keys rotate mk_01J… --out deploy-bot.json',
  )

  examples(
    group
      .command('revoke')
      .description('Revoke a key at once (done already is fine)')
      .argument('<key_id>')
      .action(
        act(async (ctx, _opts, keyId) => {
          const answer = await ctx.api().delete(await ctx.workspacePath(`/machine-keys/${keyId}`))
          ctx.out.result(answer, () => `Revoked key ${keyId}`)
        }),
      ),
    'gatehouse keys revoke mk_01J… -w Acme',
  )
}
