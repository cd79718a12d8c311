// legs: once — reads test files' first lines (scripts/test-legs.ts); no store involved
import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { failuresOf } from '../scripts/junit'
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

describe('the failures npm test repeats at the end of a leg', () => {
  it('lists a test that timed out (a bare <failure/>) as well as one whose expectation failed', () => {
    const report = `<testsuites>
      <testcase name="waits too long" classname="a" time="30.04" file="tests/a.test.ts" line="3" assertions="0">
        <failure type="TimeoutError" message="test timed out" />
      </testcase>
      <testcase name="passes" classname="a" time="0.1" file="tests/a.test.ts" line="9" assertions="1" />
      <testcase name="expects &quot;1&quot;" classname="b" time="0.2" file="tests/b.test.ts" line="5" assertions="1">
        <failure message="expect(received).toBe(expected)" type="AssertionError">Expected: 1&#10;Received: 2</failure>
      </testcase>
    </testsuites>`
    expect(failuresOf(report)).toEqual([
      'tests/a.test.ts > waits too long\n  TimeoutError: test timed out',
      'tests/b.test.ts > expects "1"\n  Expected: 1\n  Received: 2',
    ])
  })
})
