#!/usr/bin/env bun
// First: @simplewebauthn/server's X.509 parser (tsyringe) needs the Reflect metadata polyfill loaded
// before it, and the compiled executable's bundle would otherwise evaluate tsyringe first.
import 'reflect-metadata'
import { buildProgram, exitCodeOf } from './cli/program'
import { addServerCommands } from './cli/server-commands'
import { StartupError, VERSION } from './config'

// In the compiled executable the worker is a second entrypoint beside this one in Bun's embedded
// file system; with --bytecode, import.meta.url keeps the build-time path, so go by Bun.main.
const WORKER_URL = Bun.main.startsWith('/$bunfs/')
  ? new URL('./jobs/worker.js', `file://${Bun.main}`)
  : new URL('./jobs/worker.ts', import.meta.url)

/** Runs one command; the exit code, or -1 while serving (the process stays). */
async function main(argv: string[]): Promise<number> {
  const program = buildProgram(VERSION)
  let code = 0
  let serving = false
  addServerCommands(
    program,
    WORKER_URL,
    (c) => {
      code = c
    },
    () => {
      serving = true
    },
  )
  try {
    // No command at all serves, as the container's entrypoint expects.
    await program.parseAsync(argv.length ? argv : ['serve'], { from: 'user' })
  } catch (e) {
    if (e instanceof StartupError) throw e
    return exitCodeOf(e, (line) => console.error(line))
  }
  return serving ? -1 : code
}

// No top-level await: the executable is compiled with --bytecode, which emits CommonJS.
main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (e) => {
    // A bad environment value or a busy port is one clear line, never a stack trace.
    if (e instanceof StartupError) {
      console.error(`gatehouse: ${e.message}`)
      process.exit(2)
    }
    throw e
  },
)
