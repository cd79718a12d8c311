/**
 * What `gatehouse <command>` exits with, for scripts (issue 58; DESIGN "CLI exit codes"). One list:
 * the CLI maps errors to these and nothing else.
 */
export const EXIT = {
  OK: 0,
  ERROR: 1,
  USAGE: 2,
  NOT_AUTHENTICATED: 3,
  NOT_FOUND: 4,
  RATE_LIMITED: 5,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

/** A failure the CLI itself reports: one line on stderr, and the exit code a script reads. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.ERROR,
  ) {
    super(message)
  }
}
