// Builds the single executable dist/gatehouse. Never --minify / --minify-identifiers:
// oidc-provider looks up class names at run time and its token endpoint then answers 500.
import { $ } from 'bun'

const outfile = process.argv[2] ?? 'dist/gatehouse'
const started = performance.now()
await $`bun build --compile --minify-whitespace --bytecode --outfile ${outfile} src/main.ts src/jobs/worker.ts`
const size = Bun.file(outfile).size
console.log(
  `built ${outfile}: ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
)
