import type { Dialect } from './store'

/** How many strings a list lookup is made for: one has a statement of its own (`inStrings`). */
export type ListSize = 'one' | 'many'

export const listSize = (values: readonly unknown[]): ListSize => (values.length === 1 ? 'one' : 'many')

/**
 * SQL for "`column` is one of the strings in `param`", one statement text per store and `ListSize`
 * (nothing is spliced in; PostgreSQL keeps one plan of each), each looked up in the column's index.
 * For one string, `column = param` and the string itself (`listParam`): a cold instance's reads are
 * of one, and the JSON list costs twice as much there (SQLite: 5.6 against 2.9 µs a workspace's state,
 * 11 against 5 µs a client's). For many, the strings go as one JSON array:
 * on PostgreSQL the array is built first (`ANY(ARRAY(…))`), since `IN (SELECT
 * json_array_elements_text(…))` is planned as a scan of the table (1.6 ms over 10,000 rows, against 55 µs).
 */
export function inStrings(dialect: Dialect, column: string, param: string, size: ListSize): string {
  if (size === 'one') return `${column} = ${param}`
  return dialect === 'sqlite'
    ? `${column} IN (SELECT value FROM json_each(${param}))`
    : `${column} = ANY(ARRAY(SELECT json_array_elements_text(${param}::text::json)))`
}

/** The parameter of `inStrings` of that size: the one string, or the JSON array (of any length). */
export const listParam = (values: readonly string[], size: ListSize): string =>
  size === 'one' && values.length === 1 ? (values[0] as string) : JSON.stringify(values)
