import { t } from 'elysia'
import { appError, defineErrorCodes, type ErrorCode, type Loc } from './errors'

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

/** Why a display name is refused; the same codes for every feature that names things. */
export const NameErrors = defineErrorCodes({
  NAME_BLANK: 'Enter a name that is not only spaces',
  NAME_UNSAFE: 'Remove control characters and invisible text-direction marks',
})

export function nameError(name: string): ErrorCode | null {
  if (!name) return NameErrors.NAME_BLANK
  if (UNSAFE_IN_NAME.test(name)) return NameErrors.NAME_UNSAFE
  return null
}

/** The name as stored: trimmed and checked by `nameError`; a 422 at `loc` otherwise. */
export function displayName(raw: string, loc: Loc = ['body', 'name']): string {
  const name = raw.trim()
  const error = nameError(name)
  if (error) throw appError(error, 422, { loc })
  return name
}
