import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const created = new Set<string>()

/** A fresh directory under the OS temp dir, removed when the test run ends (see preload.ts). */
export function tempDir(prefix = 'gatehouse-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  created.add(dir)
  return dir
}

/** Removes every directory `tempDir` made in this process; a server still holding files is fine on Linux. */
export function removeTempDirs(): void {
  for (const dir of created) rmSync(dir, { recursive: true, force: true })
  created.clear()
}
