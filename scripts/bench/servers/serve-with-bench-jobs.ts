// `gatehouse serve` plus the bench job kind (bench-jobs.ts): the job-claims scenario runs this as a
// real process, with the server's own env (DATABASE_URL, NODE_ID, JOB_WORKERS, …).
import { loadConfig } from '../../../src/config'
import { startServer } from '../../../src/server'

const server = await startServer(loadConfig(), {
  workerUrl: new URL('../../../src/jobs/worker.ts', import.meta.url),
  handlerModules: [new URL('./bench-jobs.ts', import.meta.url).pathname],
})
const shutdown = async () => {
  await server.stop()
  process.exit(0)
}
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)
