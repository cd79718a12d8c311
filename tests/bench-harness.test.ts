// legs: once — bench harness (scripts/bench: its load loop, comparator and results; no store involved)
// The bench's checked load loop and A/B comparator against two trivial servers in this process: a
// wrong answer is an error and not throughput, and a run's JSON result has the shape the docs read.
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compare, type Side } from '../scripts/bench/compare'
import { expectAccessToken, runCheckedLoad } from '../scripts/bench/load'
import { parseArgs, resolveOptions } from '../scripts/bench/options'
import { Report, type RunResult } from '../scripts/bench/results'

const token = () => Response.json({ access_token: 'a.b.c', token_type: 'Bearer' })
/** Answers a token, always. */
const right = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: token })
/** Answers a token to every other request, and a 200 without one to the rest: fast and wrong. */
let served = 0
const flaky = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: () => (served++ % 2 === 0 ? token() : Response.json({ error: 'none' })),
})
const results = mkdtempSync(join(tmpdir(), 'bench-harness-'))

afterAll(() => {
  right.stop(true)
  flaky.stop(true)
  rmSync(results, { recursive: true, force: true })
})

const side = (name: string, server: typeof right): Side => ({
  name,
  unit: 'tokens/s',
  pids: [process.pid],
  load: (seconds) =>
    runCheckedLoad(() => new Request(`http://127.0.0.1:${server.port}/token`), expectAccessToken(), {
      seconds,
      connections: 4,
    }),
})

describe('the bench harness', () => {
  it('counts an answer that fails its check as an error, not as throughput', async () => {
    const load = await side('flaky', flaky).load(0.3)
    expect(load.requests).toBeGreaterThan(10)
    expect(load.errors).toBeGreaterThanOrEqual(Math.floor(load.requests / 2) - 4)
    expect([...load.errorKinds.keys()]).toEqual(['HTTP 200 without access_token: {"error":"none"}'])
    expect(load.rps).toBeCloseTo((load.requests - load.errors) / load.seconds, 5)
  })

  it('alternates the two sides round by round and writes the comparison as JSON', async () => {
    const opts = resolveOptions(parseArgs(['--rounds', '2', '--seconds', '0.3', '--warmup', '0.1']))
    const report = new Report('harness', 'two trivial servers', { ...opts, results }, () => {})
    const order: string[] = []
    const track = (s: Side): Side => ({
      ...s,
      load: (seconds) => {
        order.push(s.name)
        return s.load(seconds)
      },
    })
    const c = await compare(track(side('right', right)), track(side('flaky', flaky)), {
      ...opts,
      log: () => {},
    })
    // Warm-ups, then baseline subject, subject baseline.
    expect(order).toEqual(['right', 'flaky', 'right', 'flaky', 'flaky', 'right'])
    report.comparison('flaky / right', c)
    report.ratioTarget('flaky / right', 0.9)
    const file = report.save(results)
    const saved = JSON.parse(readFileSync(file, 'utf8')) as RunResult
    const comparison = saved.comparisons['flaky / right']!
    expect(comparison.ratios).toHaveLength(2)
    expect(comparison.baseline.windows).toHaveLength(2)
    expect(comparison.errors.baseline).toBe(0)
    expect(comparison.errors.subject).toBeGreaterThan(0)
    expect(saved.errors).toBe(comparison.errors.subject)
    // A round's ratio is of the rates of checked answers only: the wrong half is not in it.
    for (const [i, ratio] of comparison.ratios.entries()) {
      const [b, s] = [comparison.baseline.windows[i]!, comparison.subject.windows[i]!]
      expect(s.errors).toBeGreaterThanOrEqual(Math.floor(s.requests / 2) - 4)
      expect(s.rps).toBeCloseTo((s.requests - s.errors) / s.seconds, 5)
      expect(ratio).toBeCloseTo(s.rps / b.rps, 5)
    }
    expect(comparison.subject.windows[0]).toMatchObject({
      rps: expect.any(Number),
      requests: expect.any(Number),
      errors: expect.any(Number),
      p95: expect.any(Number),
      cpuPerOp: expect.any(Number),
      errorKinds: { 'HTTP 200 without access_token: {"error":"none"}': expect.any(Number) },
    })
    expect(comparison.ratio.min).toBeLessThanOrEqual(comparison.ratio.median)
    expect(comparison.ratio.max).toBeGreaterThanOrEqual(comparison.ratio.median)
    expect(saved.targets).toEqual([
      {
        what: 'flaky / right ratio >= 0.90',
        met: comparison.ratio.median >= 0.9,
        value: expect.stringMatching(/^\d\.\d\d/),
      },
    ])
    expect(saved).toMatchObject({
      scenario: 'harness',
      options: { rounds: 2, seconds: 0.3 },
      host: { cpus: expect.any(Number) },
    })
  })
})
