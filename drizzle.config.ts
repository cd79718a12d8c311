import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  schema: ['./src/db/schema/index.ts', './src/identity/schema.ts'],
  out: './db/migrations',
})
