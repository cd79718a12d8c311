import { type Command, Option } from 'commander'
import type { Options } from '../command'
import { act, commandGroup, examples, wholeNumber } from '../command'
import type { CliContext } from '../context'

interface Entry {
  id: string
  at: string
  actor: string
  action: string
  target: { type: string; id: string }
  ip: string | null
}

interface Page {
  items: Entry[]
  next_cursor: string | null
}

const line = (e: Entry) => `${e.at}  ${e.actor}  ${e.action}  ${e.target.type}:${e.target.id}`
/** Oldest first, as a log reads; entries of one millisecond by id, as the API orders them. */
const chronological = (a: Entry, b: Entry) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id)

/** Every entry at or after `since` (all when null), through the pages. */
async function entriesSince(ctx: CliContext, opts: Options, since: string | null): Promise<Entry[]> {
  const entries: Entry[] = []
  let cursor: string | null = null
  do {
    const query = filters(opts, { limit: '200', ...(since ? { since } : {}), ...(cursor ? { cursor } : {}) })
    const page: Page = await ctx.api().get<Page>(await ctx.workspacePath(`/audit-log?${query}`))
    entries.push(...page.items)
    cursor = page.next_cursor
  } while (cursor)
  return entries
}

function filters(opts: Options, extra: Record<string, string>): URLSearchParams {
  const query = new URLSearchParams(extra)
  if (opts.action) query.set('action', opts.action)
  if (opts.actor) query.set('actor', opts.actor)
  return query
}

/** `audit tail [--follow]`: the workspace's audit log as a log file reads, newest last. */
export function registerAudit(program: Command): void {
  const group = commandGroup(
    program,
    'audit',
    "A workspace's audit log",
    'gatehouse audit tail -w Acme --follow',
  )

  examples(
    group
      .command('tail')
      .description(
        'Print the latest entries, oldest first; --follow prints new ones as they come (--json: one object a line)',
      )
      .option('-f, --follow', 'keep printing new entries until interrupted')
      .addOption(
        new Option('-n, --lines <n>', 'how many of the latest entries first (1 to 200)')
          .default(20)
          .argParser(wholeNumber(1)),
      )
      .option('--action <action>', 'only this action, or a prefix ending in .* (app.*)')
      .option('--actor <actor>', 'only this actor: user:<account id> or key:<key id>')
      .addOption(
        new Option('--interval <seconds>', 'how often --follow asks').default(2).argParser(wholeNumber(1)),
      )
      .action(
        act(async (ctx, opts) => {
          const path = await ctx.workspacePath(`/audit-log?${filters(opts, { limit: String(opts.lines) })}`)
          const latest = (await ctx.api().get<Page>(path)).items.sort(chronological)
          for (const e of latest) ctx.out.streamed(e, line(e))
          if (!opts.follow) return
          // An interrupt ends a follow as it should: not an error.
          for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0))
          let newest = latest.at(-1)?.at ?? null
          // `since` is inclusive: the entries of the newest millisecond come again and are skipped.
          let seen = new Set(latest.filter((e) => e.at === newest).map((e) => e.id))
          for (;;) {
            await Bun.sleep(opts.interval * 1000)
            const fresh = (await entriesSince(ctx, opts, newest))
              .filter((e) => !seen.has(e.id))
              .sort(chronological)
            for (const e of fresh) ctx.out.streamed(e, line(e))
            if (!fresh.length) continue
            const previous = newest
            newest = fresh.at(-1)!.at
            const atNewest = fresh.filter((e) => e.at === newest).map((e) => e.id)
            seen = new Set(newest === previous ? [...seen, ...atNewest] : atNewest)
          }
        }),
      ),
    'gatehouse audit tail -w Acme',
    'gatehouse audit tail -w Acme --follow --action "app.*" --json | jq .action',
  )
}
