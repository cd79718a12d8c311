import { type Command, InvalidArgumentError, Option } from 'commander'
import { CliContext } from './context'
import type { Column } from './output'

/** A command's own options as commander parsed them. */
// biome-ignore lint/suspicious/noExplicitAny: commander types options by its flags only at runtime
export type Options = Record<string, any>

/**
 * A commander action running `fn` with the command's context (global options), its own options
 * and its arguments, in that order.
 */
export function act<A extends string[]>(fn: (ctx: CliContext, opts: Options, ...args: A) => Promise<void>) {
  return async (...params: unknown[]) => {
    const command = params[params.length - 1] as Command
    const args = params.slice(0, -2) as A
    await fn(new CliContext(command.optsWithGlobals()), command.opts(), ...args)
  }
}

/** Adds "Examples:" to a command's --help (every command has at least one). */
export function examples(command: Command, ...lines: string[]): Command {
  return command.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}`)
}

/** Collects a repeatable option; `a,b` counts as two values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean),
  ]
}

/** A whole number option (commander reports anything else as a usage error). */
export function wholeNumber(min = 0) {
  return (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`Expected a whole number, ${min} or more.`)
    return n
  }
}

/** A group of commands (`apps`, `keys`, …) with its examples. */
export function commandGroup(
  program: Command,
  name: string,
  description: string,
  ...lines: string[]
): Command {
  return examples(program.command(name).description(description), ...lines)
}

/** A paged list's --limit and --cursor (DESIGN: limit 1..200, default 50; an opaque cursor). */
export function paged(command: Command, what: string): Command {
  return command
    .addOption(new Option('--limit <n>', `${what} per page (1 to 200)`).default(50).argParser(wholeNumber(1)))
    .option('--cursor <cursor>', 'the next page, as the previous one said')
}

/** The query of a paged list: its page options and the filters that are set. */
export function pageQuery(opts: Options, filters: Record<string, string | undefined> = {}): URLSearchParams {
  const query = new URLSearchParams({ limit: String(opts.limit) })
  if (opts.cursor) query.set('cursor', opts.cursor)
  for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value)
  return query
}

/** `<group> list`: the workspace's `path` as a table of `columns` (the example names the group). */
export function listCommand<T>(
  group: Command,
  description: string,
  path: string,
  columns: Column<T>[],
): Command {
  const none = `No ${group.name()}.`
  return examples(
    group
      .command('list')
      .description(description)
      .action(
        act(async (ctx) => {
          ctx.out.list(await ctx.api().get<{ items: T[] }>(await ctx.workspacePath(path)), columns, none)
        }),
      ),
    `gatehouse ${group.name()} list -w Acme`,
  )
}
