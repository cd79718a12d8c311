import { describe, expect, it } from 'bun:test'
import { safeNext } from './service'

describe('safeNext', () => {
  it('keeps a relative path with query and fragment', () => {
    expect(safeNext('/app/workspaces/new')).toBe('/app/workspaces/new')
    expect(safeNext('/app/x?tab=apps#top')).toBe('/app/x?tab=apps#top')
  })

  for (const unsafe of [
    'https://evil.example',
    '//evil.example',
    '/\\evil.example',
    'javascript:alert(1)',
    'evil.example/app',
    '/app\\..\\..\\evil',
    '/app\nLocation: https://evil.example',
    '/\t/evil.example',
    '',
    undefined,
  ]) {
    it(`drops ${JSON.stringify(unsafe)}`, () => {
      expect(safeNext(unsafe)).toBeNull()
    })
  }
})
