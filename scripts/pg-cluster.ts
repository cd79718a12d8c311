// A throwaway PostgreSQL cluster for `npm test` (scripts/test.ts) and the PostgreSQL bench scenarios
// (scripts/bench.ts): Debian's `postgresql` package, `initdb` into a temporary folder (as the
// `postgres` user when run as root: initdb refuses root), a free loopback port, no durability
// (fsync=off), removed again by stop() — or when this process exits or is interrupted.

import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { SQL } from 'bun'
import { freePort } from './free-port'

const root = resolve(import.meta.dir, '..')

/** Thrown when PostgreSQL is not installed and could not be; its message says how, in one line. */
export class PostgresMissing extends Error {}

export interface ThrowawayCluster {
  /** `postgres://gatehouse@127.0.0.1:<port>`: no database name; append `/<name>`. */
  adminUrl: string
  /** The postmaster's pid (its backends are its children), for CPU accounting. */
  pid: number
  /**
   * CREATE DATABASE `name` (a random `db_…` name by default), copied from `template` when given;
   * returns its URL.
   */
  createDatabase(name?: string, opts?: { template?: string }): Promise<string>
  /** Stops the cluster (immediate mode: nothing in it is kept) and removes its folder; idempotent. */
  stop(): Promise<void>
}

function postgresBin(): string | null {
  const base = '/usr/lib/postgresql'
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, 'bin/initdb')))
      .sort((a, b) => Number(b) - Number(a))
    if (versions[0]) return join(base, versions[0], 'bin')
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' })
  return which.status === 0 ? resolve(which.stdout.trim(), '..') : null
}

/** As root with apt (CI, a fresh machine): installs Debian's postgresql. False when it cannot. */
function installPostgres(purpose: string): boolean {
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) return false
  console.log(`Installing postgresql from apt for ${purpose}…`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  if (spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env }).status !== 0) return false
  return spawnSync('apt-get', ['install', '-y', '-qq', 'postgresql'], { stdio: 'inherit', env }).status === 0
}

/** initdb and pg_ctl refuse root: as root they run as the `postgres` user the package created. */
function asOwner(cmd: string[]): string[] {
  return process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd
}

function run(cmd: string[], what: string) {
  const r = spawnSync(cmd[0] as string, cmd.slice(1), { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${what} failed: ${r.stderr || r.stdout}`)
}

/**
 * Starts a cluster (installing PostgreSQL with apt first when it is missing and this is root on a
 * Debian-like machine). Throws PostgresMissing, whose message says how to install it, when neither
 * worked. Connections are trusted (no password) and only on 127.0.0.1.
 */
export async function startThrowawayCluster(
  opts: {
    /** What needs it, for the lines printed: `the PostgreSQL leg`. */
    purpose?: string
    /** How to do without, appended to the hint: `(or TEST_STORE=sqlite npm test)`. */
    otherwise?: string
    maxConnections?: number
  } = {},
): Promise<ThrowawayCluster> {
  const purpose = opts.purpose ?? 'a throwaway PostgreSQL cluster'
  let bin = postgresBin()
  if (!bin && installPostgres(purpose)) bin = postgresBin()
  if (!bin) {
    const need = `${purpose.charAt(0).toUpperCase()}${purpose.slice(1)} needs`
    throw new PostgresMissing(
      `${need} Debian's postgresql package: sudo apt-get install postgresql${opts.otherwise ? ` ${opts.otherwise}` : ''}`,
    )
  }
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'))
  if (process.getuid?.() === 0)
    chownSync(dir, Number(spawnSync('id', ['-u', 'postgres']).stdout.toString()), 0)
  const data = join(dir, 'data')
  const ctl = join(bin, 'pg_ctl')
  let started = false
  let stopped = false
  // Synchronous, so that it also runs from an `exit` handler.
  const stopNow = () => {
    if (stopped) return
    stopped = true
    process.off('exit', stopNow)
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    if (started) {
      const [cmd, ...rest] = asOwner([ctl, '-D', data, '-m', 'immediate', 'stop'])
      spawnSync(cmd as string, rest)
    }
    rmSync(dir, { recursive: true, force: true })
  }
  function onSignal(signal: NodeJS.Signals) {
    stopNow()
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }
  process.on('exit', stopNow)
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    const port = await freePort()
    run(asOwner([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'gatehouse', '--no-sync']), 'initdb')
    const options = [
      `-p ${port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      `-c max_connections=${opts.maxConnections ?? 1000}`,
    ].join(' ')
    run(asOwner([ctl, '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']), 'pg_ctl start')
    started = true
    const adminUrl = `postgres://gatehouse@127.0.0.1:${port}`
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
    let admin: SQL | null = null
    return {
      adminUrl,
      pid,
      async createDatabase(name = `db_${randomBytes(8).toString('hex')}`, { template } = {}) {
        const ident = /^[a-z_][a-z0-9_]*$/
        if (!ident.test(name) || (template !== undefined && !ident.test(template)))
          throw new Error(`not a plain database name: ${name}${template ? ` / ${template}` : ''}`)
        admin ??= new SQL({ url: `${adminUrl}/postgres`, max: 1 })
        await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)
        return `${adminUrl}/${name}`
      },
      async stop() {
        await admin?.close()
        admin = null
        stopNow()
      },
    }
  } catch (e) {
    stopNow()
    throw e
  }
}

/**
 * Applies gatehouse's migrations to the database at `url` (`gatehouse migrate` in a child process:
 * this one's tables may have been declared for the other dialect).
 */
export function migrateDatabase(url: string): void {
  const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-migrate-'))
  try {
    const migrate = spawnSync(process.execPath, ['src/main.ts', 'migrate'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: url, SECRET_KEY: '00'.repeat(32), DATA_DIR: scratch },
    })
    if (migrate.status !== 0) throw new Error(`migrating ${url} failed: ${migrate.stderr}`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
