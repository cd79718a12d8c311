// CPU accounting around a measurement (Linux /proc; elsewhere every figure is null). On a small,
// shared machine req/s moves with whatever else runs; CPU time per request of the server is far
// steadier, and the CPU the rest of the machine burnt during the window says how noisy it was.
import { readdirSync, readFileSync } from 'node:fs'

const TICK_S = 0.01 // USER_HZ is 100 on every Linux we run on

/** utime + stime of a process (all its threads), in seconds. */
function processCpu(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may contain spaces), counted from field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_S
  } catch {
    return null
  }
}

/** Busy CPU seconds of the whole machine (every core). */
function machineBusy(): number | null {
  try {
    const [, ...ticks] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/)
    const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number)
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * TICK_S
  } catch {
    return null
  }
}

/** The pids of `root` and of every process below it (a PostgreSQL postmaster and its backends). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>()
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
        const list = children.get(ppid) ?? []
        list.push(Number(entry))
        children.set(ppid, list)
      } catch {
        // The process ended while we looked.
      }
    }
  } catch {
    return [root]
  }
  const out: number[] = []
  const todo = [root]
  for (let pid = todo.pop(); pid !== undefined; pid = todo.pop()) {
    out.push(pid)
    todo.push(...(children.get(pid) ?? []))
  }
  return out
}

/** CPU seconds of several processes, by pid; null when none can be read. */
function cpuOf(pids: number[]): Map<number, number> | null {
  const out = new Map<number, number>()
  for (const pid of pids) {
    const cpu = processCpu(pid)
    if (cpu !== null) out.set(pid, cpu)
  }
  return out.size ? out : null
}

/** CPU seconds between two readings; processes that started meanwhile count from zero. */
function spent(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (before === null || after === null) return null
  let total = 0
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0)
  return total
}

export interface CpuUsage {
  /** CPU seconds the server process (or processes: every node of a cluster) used. */
  server: number | null
  /** CPU seconds the database server (a PostgreSQL cluster: postmaster and backends) used, when given. */
  database: number | null
  /** CPU seconds this (load-generating) process used. */
  driver: number | null
  /** CPU seconds everything else on the machine used. */
  others: number | null
}

/**
 * Starts accounting; call the result when the window ends. `databasePid`: a PostgreSQL postmaster,
 * whose backends (its children, read at both ends of the window) count as the database.
 */
export function cpuWindow(
  serverPid: number | number[] | undefined,
  opts: { databasePid?: number } = {},
): () => CpuUsage {
  const servers = serverPid === undefined ? [] : Array.isArray(serverPid) ? serverPid : [serverPid]
  const dbPids = () => (opts.databasePid ? processTree(opts.databasePid) : [])
  const s0 = cpuOf(servers)
  const db0 = cpuOf(dbPids())
  const d0 = processCpu(process.pid)
  const m0 = machineBusy()
  return () => {
    const s1 = cpuOf(servers)
    const db1 = cpuOf(dbPids())
    const d1 = processCpu(process.pid)
    const m1 = machineBusy()
    const server = spent(s0, s1)
    const database = opts.databasePid ? spent(db0, db1) : null
    const driver = d0 !== null && d1 !== null ? d1 - d0 : null
    const others =
      m0 !== null && m1 !== null && server !== null && driver !== null
        ? Math.max(0, m1 - m0 - server - driver - (database ?? 0))
        : null
    return { server, database, driver, others }
  }
}
