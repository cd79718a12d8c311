/** How long reads are gathered before they are made as one (reads ahead: nothing waits for them). */
const GATHER_MS = 100

/** Reads made as one at most: a full gathering is read at once. */
const GATHER_MAX = 500

/**
 * A read of one key, gathered with the others asked within `waitMs` into one read of many
 * (`readMany` answers in the order of its keys). For the reads ahead of a node's busy instances:
 * tokens at random over 10,000 of them renew a few hundred memos a second, and one read of a
 * hundred rows costs what ten reads of one do (PostgreSQL: ~530 µs against ~50 µs each).
 * A failed read fails every key of it. Callers ask for a key once at a time (they track their
 * reads under way).
 */
export function gathered<K, V>(
  readMany: (keys: readonly K[]) => Promise<readonly V[]>,
  waitMs = GATHER_MS,
  max = GATHER_MAX,
): (key: K) => Promise<V> {
  let keys: K[] = []
  let waiting: Waiting<V>[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    const batch = keys
    const answers = waiting
    keys = []
    waiting = []
    answerAll(Promise.resolve(batch).then(readMany), answers)
  }
  return (key) =>
    new Promise<V>((resolve, reject) => {
      keys.push(key)
      waiting.push({ resolve, reject })
      if (keys.length >= max) flush()
      else timer ??= setTimeout(flush, waitMs)
    })
}

/**
 * A read of one key that waits for no timer: made at once while no read of its kind is under way,
 * else gathered with the keys asked meanwhile into one read of many, made as soon as the one under
 * way came back. For the reads a request waits on (a cold instance's state, keys and client): alone,
 * a key is read alone as before; when many cold instances are asked at once (a node's restart, a
 * sweep over all of them) their reads share a round trip. On PostgreSQL a round trip costs the
 * server and the database tens of µs of CPU whether it carries one row or ten: touching 10,000
 * cold instances 8 at a time, the database's CPU per instance fell by 30% (docs/performance.md).
 * `readMany` answers in the order of its keys; a failed read fails every key of it, not the next.
 * Not for reads inside a transaction: on SQLite a read from outside one waits for its end, and a key
 * asked inside it would wait for that read (none of the three is: they serve requests, not writes).
 */
export function coalesced<K, V>(
  readMany: (keys: readonly K[]) => Promise<readonly V[]>,
  max = GATHER_MAX,
): (key: K) => Promise<V> {
  let keys: K[] = []
  let waiting: Waiting<V>[] = []
  let reading = false
  const flush = () => {
    const batch = keys
    const answers = waiting
    keys = []
    waiting = []
    reading = true
    const read = Promise.resolve(batch).then(readMany)
    answerAll(read, answers)
    read.then(next, next)
  }
  const next = () => {
    reading = false
    if (keys.length) flush()
  }
  return (key) =>
    new Promise<V>((resolve, reject) => {
      keys.push(key)
      waiting.push({ resolve, reject })
      if (!reading || keys.length >= max) flush()
    })
}

type Waiting<V> = { resolve: (v: V) => void; reject: (e: unknown) => void }

/** Answers each key of a read of many with its own value, or every one of them with its failure. */
function answerAll<V>(read: Promise<readonly V[]>, answers: readonly Waiting<V>[]): void {
  read.then(
    (values) => {
      for (let i = 0; i < answers.length; i++) answers[i]!.resolve(values[i] as V)
    },
    (e: unknown) => {
      for (const a of answers) a.reject(e)
    },
  )
}
