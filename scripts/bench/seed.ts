// `bun scripts/bench/seed.ts workspace [apps]` | `session` | `workspaces <count> <secret>`, started with a running server's env
// (DATA_DIR or DATABASE_URL, SECRET_KEY, BASE_URL): seeds its store as setup.ts does and prints the
// result as one JSON line. For scenarios whose server runs on the other dialect than the bench
// process (whose tables were declared for one dialect when it started).
import { seedSession, seedWorkspace, seedWorkspaces } from './setup'

const [what, apps] = process.argv.slice(2)
if (what === 'workspace')
  console.log(JSON.stringify(await seedWorkspace(process.env, { apps: Number(apps ?? 1) })))
else if (what === 'session') console.log(JSON.stringify(await seedSession(process.env)))
else if (what === 'workspaces')
  console.log(
    JSON.stringify(await seedWorkspaces(process.env, Number(apps), { secret: String(process.argv[4]) })),
  )
else {
  console.error('usage: bun scripts/bench/seed.ts workspace [apps] | session | workspaces <count> <secret>')
  process.exit(2)
}
