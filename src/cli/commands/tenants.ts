import { readFileSync } from 'node:fs'
import { type Command, InvalidArgumentError } from 'commander'
import { act, commandGroup, examples, paged, pageQuery } from '../command'
import { CliError } from '../exit-codes'
import { type Column, formatTable } from '../output'

interface Tenant {
  id: string
  slug: string
  name: string
  metadata: Record<string, unknown>
  created_at: string
}

interface BatchResult {
  results: (
    | { index: number; status: 'created'; tenant: Tenant }
    | { index: number; status: 'error'; error: { type: string; msg: string } }
  )[]
  created: number
  failed: number
}

const COLUMNS: Column<Tenant>[] = [
  ['ID', (t) => t.id],
  ['SLUG', (t) => t.slug],
  ['NAME', (t) => t.name],
  ['CREATED', (t) => t.created_at],
]

/** A JSON value given on the command line (commander reports anything else as a usage error). */
function jsonOption(value: string): unknown {
  try {
    return JSON.parse(value)
  } catch {
    throw new InvalidArgumentError('Expected JSON.')
  }
}

/** The batch file (or stdin for `-`): a JSON array of tenants, as the API takes it. */
async function readBatch(source: string): Promise<unknown[]> {
  let text: string
  try {
    text = source === '-' ? await Bun.stdin.text() : readFileSync(source, 'utf8')
  } catch (e) {
    throw new CliError(`cannot read ${source}: ${(e as Error).message}`)
  }
  let items: unknown
  try {
    items = JSON.parse(text)
  } catch {
    throw new CliError(`${source === '-' ? 'stdin' : source} is not JSON`)
  }
  if (!Array.isArray(items)) throw new CliError(`${source === '-' ? 'stdin' : source} is not a JSON array`)
  return items
}

/** `tenants list|create|batch`: a workspace's customers. */
export function registerTenants(program: Command): void {
  const group = commandGroup(
    program,
    'tenants',
    "A workspace's tenants (its customers' organisations)",
    'gatehouse tenants list -w Acme',
  )

  examples(
    paged(
      group
        .command('list')
        .description('List tenants, a page at a time')
        .option('--search <prefix>', 'only slugs or names starting with this'),
      'tenants',
    ).action(
      act(async (ctx, opts) => {
        const query = pageQuery(opts, { q: opts.search })
        const path = await ctx.workspacePath(`/tenants?${query}`)
        ctx.out.page(
          await ctx.api().get<{ items: Tenant[]; next_cursor: string | null }>(path),
          COLUMNS,
          'No tenants.',
        )
      }),
    ),
    'gatehouse tenants list -w Acme --search acme',
  )

  examples(
    group
      .command('create')
      .description('Create a tenant')
      .argument('<slug>', 'lower-case letters, digits and hyphens; never changes')
      .requiredOption('--name <name>', 'its display name')
      .option('--metadata <json>', 'a JSON object of your own (at most 4 KiB)', jsonOption)
      .action(
        act(async (ctx, opts, slug) => {
          const body = {
            slug,
            name: opts.name,
            ...(opts.metadata !== undefined ? { metadata: opts.metadata } : {}),
          }
          ctx.out.record(await ctx.api().post(await ctx.workspacePath('/tenants'), body))
        }),
      ),
    'gatehouse tenants create acme --name "Acme Inc" --metadata \'{"crm_id": 42}\'',
  )

  examples(
    group
      .command('batch')
      .description('Create up to 100 tenants from a JSON array; each stands alone (exit 1 if any failed)')
      .argument('<file>', 'a JSON file of [{slug, name, metadata?}, …], or - for stdin')
      .action(
        act(async (ctx, _opts, file) => {
          const items = await readBatch(file)
          const answer = await ctx.api().post<BatchResult>(await ctx.workspacePath('/tenants:batch'), items)
          ctx.out.result(answer, () =>
            [
              formatTable(answer.results, [
                ['INDEX', (r) => r.index],
                ['STATUS', (r) => r.status],
                [
                  'TENANT',
                  (r) => (r.status === 'created' ? `${r.tenant.slug} (${r.tenant.id})` : r.error.msg),
                ],
              ]),
              `${answer.created} created, ${answer.failed} failed`,
            ].join('\n'),
          )
          if (answer.failed) throw new CliError(`${answer.failed} of ${answer.results.length} tenants failed`)
        }),
      ),
    'gatehouse tenants batch tenants.json -w Acme',
    'jq -c "[.[] | {slug, name}]" export.json | gatehouse tenants batch - --json',
  )
}
