import { Argument, Command, CommanderError, Option } from 'commander'
import { ApiError } from './api'
import { examples } from './command'
import { registerApps } from './commands/apps'
import { registerAudit } from './commands/audit'
import { registerAuth } from './commands/auth'
import { registerKeys } from './commands/keys'
import { registerMembers } from './commands/members'
import { registerTenants } from './commands/tenants'
import { registerWebhooks } from './commands/webhooks'
import { registerWorkspaces } from './commands/workspaces'
import { bashCompletion, zshCompletion } from './completion'
import { DEFAULT_BASE_URL } from './context'
import { CliError, EXIT, type ExitCode } from './exit-codes'
import { KeyFileError } from './key-auth'

/**
 * The `gatehouse` program: the options every command takes, then one group of commands per
 * resource (src/cli/commands/). main.ts adds the server's own commands (serve, migrate, …).
 * Usage errors exit 2, not commander's 1 (exit-codes.ts).
 */
export function buildProgram(version: string): Command {
  const program = new Command('gatehouse')
    .description('Gatehouse: the server, and a client of its API')
    .version(version, '-V, --version', 'print the version')
    .exitOverride()
    // One prefix for every error line, commander's usage errors as the CLI's own.
    .configureOutput({ outputError: (text, write) => write(`gatehouse: ${text.replace(/^error: /, '')}`) })
    .showHelpAfterError('(add --help for usage)')
    .addOption(new Option('--json', 'print JSON only on stdout, for scripts'))
    .addOption(
      new Option(
        '--base-url <url>',
        `the server (default: the last one logged in to, or ${DEFAULT_BASE_URL})`,
      ).env('GATEHOUSE_URL'),
    )
    .addOption(
      new Option('--key-file <path>', 'call as this machine key (its key file) instead of your login').env(
        'SERVICE_MACHINE_KEY_PATH',
      ),
    )
    .addOption(
      new Option('-w, --workspace <id|name>', "the workspace (default with --key-file: the key's)").env(
        'GATEHOUSE_WORKSPACE',
      ),
    )
    .addOption(
      new Option(
        '--retries <n>',
        'tries again after a 429 or 503 this many times, waiting 1, 2, 4 … s (default 5)',
      ).env('GATEHOUSE_RETRIES'),
    )
  examples(
    program,
    'gatehouse login',
    'gatehouse workspaces create "Acme"',
    'gatehouse apps list -w Acme --json',
  )

  registerAuth(program)
  registerWorkspaces(program)
  registerApps(program)
  registerKeys(program)
  registerMembers(program)
  registerTenants(program)
  registerWebhooks(program)
  registerAudit(program)

  examples(
    program
      .command('completion')
      .description('Print a shell completion script')
      .addArgument(new Argument('<shell>').choices(['bash', 'zsh']))
      .action((shell: string) => {
        process.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program))
      }),
    'eval "$(gatehouse completion bash)"   # in ~/.bashrc',
    'gatehouse completion zsh > ~/.zfunc/_gatehouse   # a directory on $fpath',
  )
  return program
}

/**
 * The exit code of an error a command ended with, after its one line on stderr (commander wrote
 * its own usage errors already).
 */
export function exitCodeOf(e: unknown, write: (line: string) => void): ExitCode {
  if (e instanceof CommanderError) {
    // --help and --version end here too, and so does `help` when asked for.
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.OK
    if (e.code === 'commander.help' && e.exitCode === 0) return EXIT.OK
    return EXIT.USAGE
  }
  if (e instanceof CliError || e instanceof ApiError) {
    write(`gatehouse: ${e.message}`)
    return e.exitCode
  }
  if (e instanceof KeyFileError) {
    write(`gatehouse: ${e.message}`)
    return EXIT.NOT_AUTHENTICATED
  }
  // fetch's own failures (a server that does not answer) name the URL in `path`.
  const where = (e as { path?: unknown })?.path
  write(`gatehouse: ${(e as Error)?.message ?? String(e)}${typeof where === 'string' ? ` (${where})` : ''}`)
  return EXIT.ERROR
}
