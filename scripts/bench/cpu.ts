// CPU accounting around a measurement (Linux /proc; elsewhere every figure is null). On a small,
// shared machine req/s moves with whatever else runs; CPU time per request of the server is far
// steadier, and the CPU the rest of the machine burnt during the window says how noisy it was.
import { readFileSync } from 'node:fs'

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

export interface CpuUsage {
  /** CPU seconds the server process used. */
  server: number | null
  /** CPU seconds this (load-generating) process used. */
  driver: number | null
  /** CPU seconds everything else on the machine used. */
  others: number | null
}

/** Starts accounting; call the result when the window ends. */
export function cpuWindow(serverPid: number | undefined): () => CpuUsage {
  const s0 = serverPid ? processCpu(serverPid) : null
  const d0 = processCpu(process.pid)
  const m0 = machineBusy()
  return () => {
    const s1 = serverPid ? processCpu(serverPid) : null
    const d1 = processCpu(process.pid)
    const m1 = machineBusy()
    const server = s0 !== null && s1 !== null ? s1 - s0 : null
    const driver = d0 !== null && d1 !== null ? d1 - d0 : null
    const others =
      m0 !== null && m1 !== null && server !== null && driver !== null
        ? Math.max(0, m1 - m0 - server - driver)
        : null
    return { server, driver, others }
  }
}
