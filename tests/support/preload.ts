// Loaded before the test files (bunfig.toml `preload`), so `bun test <file>` runs a file alone as
// the whole suite would.
import { afterAll, setDefaultTimeout } from 'bun:test'
import { removeTempDirs } from './temp'

// Tests boot real servers, browsers and OIDC flows: Bun's default 5 s per test is too tight on 2
// cores. bunfig.toml cannot set it (Bun ignores `[test] timeout`), and from here it reaches the
// first file only (Bun 1.4.4): enough for one file; `npm test` passes --timeout for a whole run.
setDefaultTimeout(30_000)

// A hook registered here runs once, after the last file: no temp dir outlives the run.
afterAll(removeTempDirs)
