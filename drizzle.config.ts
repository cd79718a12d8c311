import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  // Each feature and subsystem owns its tables in its own schema file.
  schema: ['./src/**/schema.ts', './src/db/schema/*.ts'],
  out: './db/migrations',
})
