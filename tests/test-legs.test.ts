// legs: once — reads test files' first lines (scripts/test-legs.ts); no store involved
import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { classify, legsOf, testFiles } from '../scripts/test-legs'

const root = join(import.meta.dir, '..')

describe('the legs marker of a test file', () => {
  it('sends a file with "// legs: once — <why>" among its first 5 lines to one leg, any other to both', () => {
    expect(legsOf('// legs: once — page checks only\nimport x from "y"\n')).toEqual({ once: true })
    expect(legsOf('// What this file tests.\n//\n// More.\n\n// legs: once — unit test, no store\n')).toEqual(
      {
        once: true,
      },
    )
    expect(legsOf("import { it } from 'bun:test'\n// a comment about legs of a trip\n")).toEqual({
      once: false,
    })
    expect(legsOf('')).toEqual({ once: false })
  })

  it('reports a marker with a typo, a missing reason, another value, or below line 5', () => {
    for (const typo of [
      '// legs: onse — page checks',
      '// leg: once — page checks',
      '//legs: once — page checks',
      '// legs: once - page checks',
      '// legs once — page checks',
      '// Legs: once — page checks',
      '// lesg: once — page checks',
      '// legs: once —',
      '// legs: once',
      '// legs: both — store tests',
    ]) {
      const legs = legsOf(`${typo}\nimport x from "y"\n`)
      expect([typo, legs.once, legs.problem?.startsWith('malformed marker')]).toEqual([typo, false, true])
    }
    const late = legsOf('1\n2\n3\n4\n5\n// legs: once — too late\n')
    expect(late).toEqual({ once: false, problem: 'marker on line 6: it counts among the first 5 lines only' })
  })

  it('finds every test file of the repository well marked or unmarked', () => {
    const files = testFiles(root)
    expect(files).toContain('tests/test-legs.test.ts')
    expect(files).toContain('src/config.test.ts')
    const { once, problems } = classify(root, files)
    expect(problems).toEqual([])
    expect(once).toContain('tests/test-legs.test.ts')
  })
})
