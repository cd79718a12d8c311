import { defineConfig } from 'drizzle-kit'

// One schema (src/db/columns.ts picks the builders), migrations per dialect: `npm run db:generate`
// runs this config and drizzle.postgres.config.ts. Run under Bun: a schema file may reference
// another's table through a module that uses Bun's APIs.
process.env.GATEHOUSE_SCHEMA_DIALECT = 'sqlite'

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/**/schema.ts',
  out: './db/migrations/sqlite',
})
