// Which legs of `npm test` a test file runs on. A file that does not depend on the store's dialect
// says so among its first lines with `// legs: once — <why>` and runs once, on the SQLite leg; every
// other file runs on SQLite and on PostgreSQL. A marker that is almost right would silently send a
// file to both legs (or, worse, hide a typo of a file meant for one): it is reported instead.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

/** The marker's lines are looked for among the first this many of a file. */
export const MARKER_LINES = 5
const WELL_FORMED = /^\/\/ legs: once — \S/
/** A comment that looks like an attempt at the marker: `legs:`, `leg:`, or `<word>: once`. */
const ATTEMPT = /^\s*\/\/\s*(legs?\b\s*[:=-]?|[\w-]+\s*:\s*once\b)/i

export type Legs = { once: boolean; problem?: string }

/** The legs `source` asks for, and what is wrong with its marker when something is. */
export function legsOf(source: string): Legs {
  const lines = source.split('\n')
  const head = lines.slice(0, MARKER_LINES)
  const marker = head.find((line) => ATTEMPT.test(line))
  if (marker !== undefined) {
    if (WELL_FORMED.test(marker)) return { once: true }
    return { once: false, problem: `malformed marker "${marker.trim()}": write "// legs: once — <why>"` }
  }
  const late = lines.findIndex((line, i) => i >= MARKER_LINES && /^\s*\/\/\s*legs?\s*:/i.test(line))
  if (late >= 0)
    return {
      once: false,
      problem: `marker on line ${late + 1}: it counts among the first ${MARKER_LINES} lines only`,
    }
  return { once: false }
}

/** Every `*.test.ts` under tests/ and src/ (what `bun test` finds), relative to `root`, sorted. */
export function testFiles(root: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(path)
      } else if (/\.test\.tsx?$/.test(entry.name)) found.push(relative(root, path))
    }
  }
  for (const top of ['tests', 'src']) walk(join(root, top))
  return found.sort()
}

/** `files` split by their markers; `problems` names each file whose marker is wrong. */
export function classify(root: string, files: string[]) {
  const once: string[] = []
  const both: string[] = []
  const problems: string[] = []
  for (const file of files) {
    const legs = legsOf(readFileSync(join(root, file), 'utf8'))
    if (legs.problem) problems.push(`${file}: ${legs.problem}`)
    ;(legs.once ? once : both).push(file)
  }
  return { once, both, problems }
}
