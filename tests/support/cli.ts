import { join } from 'node:path'
import type { Subprocess } from 'bun'

const root = join(import.meta.dir, '../..')

/**
 * Runs `bun src/main.ts …` to the end with exactly `env` (plus PATH: nothing else of the test's
 * environment leaks into the child), `stdin` as its input if given, and returns what an operator
 * would see.
 */
export async function runCli(args: string[], env: Record<string, string>, stdin?: string) {
  const proc = Bun.spawn([process.execPath, 'src/main.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdin: stdin === undefined ? null : Buffer.from(stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { stdout, stderr, code }
}

export interface RunningCli {
  proc: Subprocess
  /** What it wrote so far. */
  output: { stdout: string; stderr: string }
  /** Resolves with the first match of `pattern` in `stream` once it was written (or throws after `ms`). */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, ms?: number): Promise<RegExpMatchArray>
  /** Its end: everything it wrote and its exit code. */
  exited: Promise<{ stdout: string; stderr: string; code: number }>
}

/** Starts `bun src/main.ts …` as runCli does, for a command that runs on (`login`, `audit tail -f`). */
export function spawnCli(args: string[], env: Record<string, string>): RunningCli {
  const proc = Bun.spawn([process.execPath, 'src/main.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const output = { stdout: '', stderr: '' }
  const drain = async (stream: 'stdout' | 'stderr') => {
    const decoder = new TextDecoder()
    const reader = (proc[stream] as ReadableStream<Uint8Array>).getReader()
    for (let read = await reader.read(); !read.done; read = await reader.read())
      output[stream] += decoder.decode(read.value, { stream: true })
  }
  const drained = Promise.all([drain('stdout'), drain('stderr')])
  return {
    proc,
    output,
    async waitFor(stream, pattern, ms = 15_000) {
      const deadline = Date.now() + ms
      for (;;) {
        const match = output[stream].match(pattern)
        if (match) return match
        if (Date.now() > deadline || proc.exitCode !== null)
          throw new Error(`no ${pattern} on the CLI's ${stream}:\n${output.stdout}\n${output.stderr}`)
        await Bun.sleep(25)
      }
    },
    exited: drained.then(async () => ({ ...output, code: await proc.exited })),
  }
}
