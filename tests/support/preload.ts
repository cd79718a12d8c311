// Loaded before every test file (bunfig.toml `preload`). A hook registered here runs once, after
// the last file: whole runs and `bun test <file>` alike leave no temp dirs behind.
import { afterAll } from 'bun:test'
import { removeTempDirs } from './temp'

afterAll(removeTempDirs)
