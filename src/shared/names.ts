import { t } from 'elysia'
import { unprocessable } from './errors'

/**
 * What a display name (workspace, app) must not contain: control characters (C0, DEL, C1: they
 * break logs, mail subjects and terminals), Unicode line/paragraph separators, lone surrogates
 * (not text), and the invisible direction controls that make a name read differently from what it
 * is ("Trojan Source", CVE-2021-42574): the embeddings and overrides U+202A–U+202E, the isolates
 * U+2066–U+2069, and the implicit marks U+200E, U+200F and U+061C. The marks are refused too: a name
 * in Hebrew or Arabic displays correctly without them, and they can flip the order of neighbouring
 * digits and punctuation. Joiners (U+200C, U+200D) stay: scripts and emoji need them.
 */
const UNSAFE_IN_NAME = /[\p{Cc}\p{Cs}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u

/** The rule as API docs state it (the `description` of name fields). */
const NAME_RULE = 'Trimmed; no control characters or invisible text-direction marks (422)'

/**
 * A display-name property of a model (workspace, app): its length rule with the messages a form
 * shows for it. What `displayName` refuses beyond that is the service's 422.
 */
export const nameField = (maxLength: number) =>
  t.String({
    minLength: 1,
    maxLength,
    description: NAME_RULE,
    errorMessage: { minLength: 'Enter a name.', maxLength: `Use at most ${maxLength} characters.` },
  })

const UNSAFE_NAME_MESSAGE = 'Remove control characters and invisible text-direction marks'

/** Why a (trimmed) name is refused, phrased for a person, or null when it is fine. */
function nameProblem(name: string): string | null {
  if (!name) return 'Enter a name that is not only spaces'
  if (UNSAFE_IN_NAME.test(name)) return UNSAFE_NAME_MESSAGE
  return null
}

/** The name as stored: trimmed and checked by `nameProblem`; a 422 at `loc` otherwise. */
export function displayName(raw: string, loc: (string | number)[] = ['body', 'name']): string {
  const name = raw.trim()
  const problem = nameProblem(name)
  if (problem) throw unprocessable(name ? 'NAME_UNSAFE' : 'NAME_BLANK', problem, loc)
  return name
}
