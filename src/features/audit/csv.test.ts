import { describe, expect, it } from 'bun:test'
import { CSV_HEADER, csvCell, csvRecord } from './csv'

describe('csvCell', () => {
  it('puts an apostrophe before every cell a spreadsheet would run as a formula', () => {
    for (const lead of ['=', '+', '-', '@', '\t', '\r'])
      expect(csvCell(`${lead}SUM(1,2)`).replace(/^"|"$/g, '').startsWith(`'${lead}`)).toBe(true)
    expect(csvCell('=1+2')).toBe("'=1+2")
    expect(csvCell('\tx')).toBe("'\tx")
    // A CR also needs quoting (RFC 4180 §2 rule 6): neutralised first, then quoted.
    expect(csvCell('\rx')).toBe(`"'\rx"`)
    expect(csvCell('a=1')).toBe('a=1')
    expect(csvCell(' =1')).toBe(' =1')
  })

  it('quotes as RFC 4180 says: commas, quotes (doubled) and line breaks', () => {
    expect(csvCell('plain')).toBe('plain')
    expect(csvCell('a,b')).toBe('"a,b"')
    expect(csvCell('say "hi"')).toBe('"say ""hi"""')
    expect(csvCell('two\nlines')).toBe('"two\nlines"')
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`)
    expect(csvCell(null)).toBe('')
    expect(csvCell('')).toBe('')
  })

  it('ends a record with CRLF', () => {
    expect(csvRecord(CSV_HEADER)).toBe('id,at,actor,action,target_type,target_id,ip,user_agent,changes\r\n')
    expect(csvRecord(['a', null, 'b,c'])).toBe('a,,"b,c"\r\n')
  })
})
