import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Start-up steps that rewrite data a schema migration cannot (they need the master key), done
 * once per store: checking a row here is cheaper than scanning for rows still to rewrite.
 */
export const upgradeSteps = sqliteTable('upgrade_steps', {
  name: text('name').primaryKey(),
  doneAt: integer('done_at').notNull(),
})
