import { join } from 'node:path'

const root = join(import.meta.dir, '../..')

/**
 * Runs `bun src/main.ts …` to the end with exactly `env` (plus PATH: nothing else of the test's
 * environment leaks into the child) and returns what an operator would see.
 */
export async function runCli(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, 'src/main.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
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
