import type { Dialect } from './store'

/**
 * SQL for "`column` is one of the strings of the JSON array in `param`": one statement text for any
 * number of them (PostgreSQL keeps one plan; nothing is spliced in), each looked up in the column's
 * index on either store. Pass the array as text: `JSON.stringify(ids)`.
 *
 * On PostgreSQL the array is built first (`ANY(ARRAY(…))`): `IN (SELECT json_array_elements_text(…))`
 * is planned as a scan of the table (1.6 ms over 10,000 rows, against 55 µs).
 */
export function inJsonStrings(dialect: Dialect, column: string, param: string): string {
  return dialect === 'sqlite'
    ? `${column} IN (SELECT value FROM json_each(${param}))`
    : `${column} = ANY(ARRAY(SELECT json_array_elements_text(${param}::text::json)))`
}
