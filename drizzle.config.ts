import { defineConfig } from 'drizzle-kit'

// Run under Bun (`npm run db:generate`): a schema file may reference another's table through a
// module that uses Bun's APIs (e.g. sessions.account_id → the identity plane's accounts).
export default defineConfig({
  dialect: 'sqlite',
  // Each feature and subsystem owns its tables in its own schema file.
  schema: './src/**/schema.ts',
  out: './db/migrations',
})
