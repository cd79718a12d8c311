/** A column of a table: its header and how a row shows in it. */
export type Column<T> = [header: string, cell: (row: T) => unknown]

/** How one value reads in a table or a details view: `-` for nothing, lists joined, objects as JSON. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-'
  if (Array.isArray(value)) return value.length ? value.map(cell).join(',') : '-'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** Columns padded to their widest cell, two spaces apart; the last one is not padded. */
export function formatTable<T>(rows: T[], columns: Column<T>[]): string {
  const grid = [columns.map(([h]) => h), ...rows.map((r) => columns.map(([, f]) => cell(f(r))))]
  const widths = columns.map((_, i) => Math.max(...grid.map((line) => line[i]!.length)))
  return grid
    .map((line) =>
      line
        .map((text, i) => (i === line.length - 1 ? text : text.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** `key: value` lines, keys aligned. */
function formatDetails(record: Record<string, unknown>): string {
  const keys = Object.keys(record)
  const width = Math.max(0, ...keys.map((k) => k.length))
  return keys.map((k) => `${`${k}:`.padEnd(width + 1)} ${cell(record[k])}`).join('\n')
}

/**
 * What a command prints. With `--json` stdout carries only JSON (the API's answer as is, or one
 * object per line for a stream); tables and notes are for people. Notes, progress and errors go to
 * stderr, so a pipe reads the result alone.
 */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly stdout: (text: string) => void = (t) => void process.stdout.write(t),
    private readonly stderr: (text: string) => void = (t) => void process.stderr.write(t),
  ) {}

  /** A result: as JSON, or as `human` renders it. */
  result(value: unknown, human: () => string): void {
    this.stdout(`${this.json ? JSON.stringify(value, null, 2) : human()}\n`)
  }

  /** A list answer (`{items, …}`): the answer as JSON, or its items as a table. */
  list<T>(answer: { items: T[] }, columns: Column<T>[], none: string): void {
    this.result(answer, () => (answer.items.length ? formatTable(answer.items, columns) : none))
  }

  /** A page of a list (`{items, next_cursor}`): as `list`, and for people how to ask for the next. */
  page<T>(answer: { items: T[]; next_cursor: string | null }, columns: Column<T>[], none: string): void {
    this.list(answer, columns, none)
    if (answer.next_cursor && !this.json) this.note(`More: --cursor ${answer.next_cursor}`)
  }

  /** One record: as JSON, or as `key: value` lines of `fields` (all of them by default). */
  record(value: Record<string, unknown>, fields?: string[]): void {
    const shown = fields ? Object.fromEntries(fields.map((f) => [f, value[f]])) : value
    this.result(value, () => formatDetails(shown))
  }

  /** One item of a stream: a JSON line, or a line for people. */
  streamed(value: unknown, human: string): void {
    this.stdout(`${this.json ? JSON.stringify(value) : human}\n`)
  }

  /** A line for the person at the terminal, on stderr. */
  note(text: string): void {
    this.stderr(`${text}\n`)
  }

  /**
   * A spinner with `text` on stderr while `task` runs, when stderr is a terminal (nothing otherwise:
   * a log file gets no carriage returns). `task` may change the text.
   */
  async progress<T>(text: string, task: (update: (text: string) => void) => Promise<T>): Promise<T> {
    if (!process.stderr.isTTY) return task(() => {})
    const frames = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏'
    let frame = 0
    let current = text
    const draw = () => this.stderr(`\r\x1b[2K${frames[frame++ % frames.length]} ${current}`)
    draw()
    const timer = setInterval(draw, 100)
    try {
      return await task((t) => {
        current = t
      })
    } finally {
      clearInterval(timer)
      this.stderr('\r\x1b[2K')
    }
  }
}
