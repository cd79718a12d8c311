/**
 * ISO 8601 timestamps as the audit log's `since` and `until` take them: a date (`2025-01-31`, UTC
 * midnight) or a date and time to the minute, second or fraction, with `Z` or an offset (`+02:00`),
 * UTC when it has none. Milliseconds since the epoch; null for anything else, an impossible date
 * (`2025-02-30`) included, which `Date.parse` would roll over into March.
 */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?$/

export function parseTimestamp(text: string): number | null {
  const m = ISO_8601.exec(text.trim())
  if (!m) return null
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((v) => Number(v ?? 0))
  const ms = Math.floor(Number(`0.${m[7] ?? '0'}`) * 1000)
  const offsetMinutes = m[9] ? (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11])) : 0
  if (month! < 1 || month! > 12 || hour > 23 || minute > 59 || second > 59) return null
  if (Number(m[10] ?? 0) > 23 || Number(m[11] ?? 0) > 59) return null
  // setUTCFullYear, not Date.UTC, which reads years 0..99 as 1900..1999.
  const date = new Date(0)
  date.setUTCFullYear(year!, month! - 1, day!)
  if (date.getUTCMonth() !== month! - 1) return null
  date.setUTCHours(hour, minute, second, ms)
  return date.getTime() - offsetMinutes * 60_000
}
