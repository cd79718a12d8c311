// `npm run check`: fails when a schema.ts changed and a dialect's migrations were not regenerated
// (`npm run db:generate`). drizzle-kit generates into a scratch copy of each dialect's folder; any
// new migration there means the committed ones lag behind the schema.
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dir, '..')
const DIALECTS = [
  { name: 'sqlite', kit: 'sqlite' },
  { name: 'postgres', kit: 'postgresql' },
] as const

let stale = 0
for (const { name, kit } of DIALECTS) {
  const committed = join(root, 'db/migrations', name)
  // drizzle-kit takes a relative `--out` only; the folder is git-ignored.
  const scratch = `.migrations-check/${name}`
  rmSync(join(root, scratch), { recursive: true, force: true })
  mkdirSync(join(root, scratch), { recursive: true })
  try {
    cpSync(committed, join(root, scratch), { recursive: true })
    const before = readdirSync(join(root, scratch)).length
    const run = Bun.spawnSync(
      [
        process.execPath,
        '--bun',
        'node_modules/.bin/drizzle-kit',
        'generate',
        '--dialect',
        kit,
        '--schema',
        './src/**/schema.ts',
        '--out',
        scratch,
      ],
      { cwd: root, env: { ...process.env, GATEHOUSE_SCHEMA_DIALECT: name }, stdout: 'pipe', stderr: 'pipe' },
    )
    const said = run.stdout.toString() + run.stderr.toString()
    // drizzle-kit exits 0 even when a schema file failed to load: go by what it says.
    if (run.exitCode !== 0 || !/No schema changes|Your SQL migration file/.test(said)) {
      console.error(`check-migrations: drizzle-kit failed for ${name}:\n${said}`)
      process.exit(1)
    }
    if (readdirSync(join(root, scratch)).length !== before) {
      console.error(`check-migrations: db/migrations/${name} lags behind the schema: run npm run db:generate`)
      stale++
    }
  } finally {
    rmSync(join(root, scratch), { recursive: true, force: true })
  }
}
rmSync(join(root, '.migrations-check'), { recursive: true, force: true })
if (stale > 0) process.exit(1)
console.log('check-migrations: both dialects are generated from the current schema')
