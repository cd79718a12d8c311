import type { AuditModel } from './model'

/** The export's columns, in order (`changes` as JSON text). */
export const CSV_HEADER = [
  'id',
  'at',
  'actor',
  'action',
  'target_type',
  'target_id',
  'ip',
  'user_agent',
  'changes',
] as const

// A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV Injection"):
// a leading apostrophe makes it text, which is what the export means.
const FORMULA = /^[=+\-@\t\r]/

/**
 * One field, quoted as RFC 4180 §2 allows (rules 5–7), neutralised against formula injection. Every
 * field is quoted: a spreadsheet whose list separator is `;` (German, French, Dutch locales) splits
 * an unquoted field at it, and the part after could start a formula.
 */
export function csvCell(value: string | null): string {
  const text = value ?? ''
  const safe = FORMULA.test(text) ? `'${text}` : text
  return `"${safe.replaceAll('"', '""')}"`
}

/** One record, CRLF-terminated (RFC 4180 §2 rule 1). */
export const csvRecord = (fields: readonly (string | null)[]) => `${fields.map(csvCell).join(',')}\r\n`

/** An entry as a CSV record, its fields in CSV_HEADER's order. */
export const itemRecord = (i: AuditModel.Item) =>
  csvRecord([
    i.id,
    i.at,
    i.actor,
    i.action,
    i.target.type,
    i.target.id,
    i.ip,
    i.user_agent,
    JSON.stringify(i.changes),
  ])
