// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { CSV_HEADER, csvCell, csvRecord } from './csv'

describe('csvCell', () => {
  it('puts an apostrophe before every cell a spreadsheet would run as a formula', () => {
    for (const lead of ['=', '+', '-', '@', '\t', '\r'])
      expect(csvCell(`${lead}SUM(1,2)`).replace(/^"|"$/g, '').startsWith(`'${lead}`)).toBe(true)
    expect(csvCell('=1+2')).toBe(`"'=1+2"`)
    expect(csvCell('\tx')).toBe(`"'\tx"`)
    expect(csvCell('\rx')).toBe(`"'\rx"`)
    expect(csvCell('a=1')).toBe('"a=1"')
    expect(csvCell(' =1')).toBe('" =1"')
  })

  it('quotes every field as RFC 4180 allows: quotes doubled, commas, semicolons and line breaks kept inside', () => {
    expect(csvCell('plain')).toBe('"plain"')
    // Excel with `;` as its list separator would split an unquoted field here, and run the rest.
    expect(csvCell("curl/8;=cmd|' /C calc'!A0")).toBe(`"curl/8;=cmd|' /C calc'!A0"`)
    expect(csvCell('a,b')).toBe('"a,b"')
    expect(csvCell('say "hi"')).toBe('"say ""hi"""')
    expect(csvCell('two\nlines')).toBe('"two\nlines"')
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`)
    expect(csvCell(null)).toBe('""')
    expect(csvCell('')).toBe('""')
  })

  it('ends a record with CRLF', () => {
    expect(csvRecord(CSV_HEADER)).toBe(
      '"id","at","actor","action","target_type","target_id","ip","user_agent","changes"\r\n',
    )
    expect(csvRecord(['a', null, 'b,c'])).toBe('"a","","b,c"\r\n')
  })
})
