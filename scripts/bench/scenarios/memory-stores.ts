// `memory-stores`: the memory scenario on a node on PostgreSQL and a node on SQLite, both up at
// once, measured in turns through the A/B comparator: the touch of every workspace in chunks of
// CHUNK (a round is one chunk on each node), then tokens at random over all workspaces. Each ratio is
// PostgreSQL's figure over SQLite's where more is better (pace, rate), SQLite's over PostgreSQL's
// where less is (first-token p95, RSS): is the PostgreSQL node within 10% of the SQLite node?
import { compare, type Side } from '../compare'
import { summarize } from '../load'
import type { Gatehouse } from '../process'
import { REWARM_S, type Scenario } from '../scenario'
import {
  countErrors,
  MEMORY_WARMUP_S,
  type MemoryNode,
  memoryNode,
  mib,
  settledResident,
  TOUCH_CONCURRENCY,
  tokenSide,
  touchAll,
} from './memory'

/** Workspaces one node touches before the other's turn (about a second each). */
const CHUNK = 1000
const MIN_RATIO = 0.9

export default {
  description:
    "the memory scenario's workspaces on a node on PostgreSQL (a fresh database of a throwaway local cluster, fsync off) and one on SQLite, both up at once, measured in turns",
  method: `every workspace touched once in chunks of ${CHUNK}, the nodes taking turns (pace ratio: median of the chunk pairs; first-token p95 over all chunks); RSS of each once settled; then tokens at random over all workspaces in --rounds turns`,
  defaults: { rounds: 9, warmup: MEMORY_WARMUP_S },
  async run({ opts, report }) {
    const running: Gatehouse[] = []
    try {
      const sqlite = await memoryNode(opts, report, 'sqlite', (g) => running.push(g))
      const postgres = await memoryNode(opts, report, 'postgres', (g) => running.push(g))
      const firstTokens = new Map<MemoryNode, number[]>([
        [sqlite, []],
        [postgres, []],
      ])
      /** Touches the node's next chunk per load: its rate is the touch pace (workspaces/s). */
      const touchSide = (node: MemoryNode): Side => {
        let from = 0
        return {
          name: `${node.name}: touch`,
          unit: 'workspaces/s',
          pids: [node.gh.pid],
          databasePid: node.databasePid,
          async load() {
            const chunk = node.workspaces.slice(from, from + CHUNK)
            from += CHUNK
            const touched = await touchAll(chunk, TOUCH_CONCURRENCY, node.gh.pid)
            countErrors(report, touched.errors)
            firstTokens.get(node)!.push(...touched.firstTokenMs)
            const failed = [...touched.errors.values()].reduce((a, b) => a + b, 0)
            return {
              ...touched.firstToken,
              p99: touched.firstToken.max,
              requests: chunk.length,
              errors: failed,
              errorKinds: touched.errors,
              seconds: touched.seconds,
              rps: chunk.length / touched.seconds,
            }
          },
        }
      }
      const chunks = Math.ceil(opts.workspaces / CHUNK)
      report.comparison(
        'touch pace',
        await compare(touchSide(sqlite), touchSide(postgres), { rounds: chunks, seconds: 0, warmup: 0 }),
      )
      const p95 = (node: MemoryNode) => summarize(firstTokens.get(node)!).p95
      const rss = async (node: MemoryNode) => {
        const at = (await settledResident(node.gh.pid, 30)).at
        report.print(`${node.name}: after touching all, ${mib(at)} settled`)
        return at?.rss ?? Number.NaN
      }
      const [sqliteRss, postgresRss] = [await rss(sqlite), await rss(postgres)]
      const tokens = (node: MemoryNode) =>
        tokenSide(`${node.name}: tokens, random`, node, node.workspaces, opts)
      report.comparison(
        'random tokens',
        await compare(tokens(sqlite), tokens(postgres), { ...opts, rewarm: REWARM_S }),
      )
      const ratio = (what: string, value: number) =>
        report.target(`${what} >= ${MIN_RATIO}`, value >= MIN_RATIO, value.toFixed(2))
      ratio('touch pace PostgreSQL / SQLite', report.result.comparisons['touch pace']!.ratio.median)
      ratio('first token p95 SQLite / PostgreSQL', p95(sqlite) / p95(postgres))
      ratio('settled RSS SQLite / PostgreSQL', sqliteRss / postgresRss)
      ratio('random tokens PostgreSQL / SQLite', report.result.comparisons['random tokens']!.ratio.median)
    } finally {
      for (const gh of running) await gh.stop()
    }
  },
} satisfies Scenario
