import { t } from 'elysia'
import { appError, defineErrorCodes } from './errors'

/**
 * Pageable lists (DESIGN "Common"): `limit` 1..200 (default 50) and an opaque `cursor`, answered
 * with `next_cursor`. The cursor is the id of a page's last row (ids are time-ordered ULIDs), in
 * base64url so that clients treat it as opaque.
 */
export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 200

const PageErrors = defineErrorCodes({
  LIMIT_INVALID: 'Use a limit from 1 to 200',
  CURSOR_INVALID: 'This cursor is not one this list handed out',
})

/** What a person types into a search box: no control characters (PostgreSQL refuses a NUL in text). */
const SEARCH_MAX = 320
const SEARCH_PATTERN = '^[^\\u0000-\\u001f\\u007f]*$'
const searchText = (description?: string) =>
  t.String({ maxLength: SEARCH_MAX, pattern: SEARCH_PATTERN, description })

/** The query of a pageable list searched by prefix (`q`). */
export const pageQuery = (q: string) =>
  t.Object({
    // 1..200, checked by `pageLimit`: Elysia reports a bound broken while it coerces a query
    // value without the property's name, so the 422 could not say which field it was.
    limit: t.Optional(t.Integer({ description: 'Page size, 1..200 (default 50)' })),
    cursor: t.Optional(t.String({ maxLength: 200, description: 'Opaque, from `next_cursor`' })),
    q: t.Optional(searchText(q)),
  })

/** The query of a dashboard page of a list: what a person typed into its search box, and "Next page". */
export const listPageQuery = t.Object({
  q: t.Optional(searchText()),
  cursor: t.Optional(t.String({ maxLength: 200 })),
})

/**
 * The search of the list page an htmx request was sent from (`q` of its HX-Current-URL), so a
 * count the answer redraws counts what that page lists; '' when none, or not a search a person
 * could type (the header is the client's word, held to the search box's rule).
 */
export function searchOfPage(request: Request): string {
  const at = URL.parse(request.headers.get('hx-current-url') ?? '')
  const q = at?.searchParams.get('q')?.trim() ?? ''
  return q.length <= SEARCH_MAX && new RegExp(SEARCH_PATTERN).test(q) ? q : ''
}

/** A list page's URL with its search and cursor, the empty ones left out. */
export function listPageUrl(path: string, query: { q?: string; cursor?: string | null }): string {
  const search = new URLSearchParams()
  if (query.q) search.set('q', query.q)
  if (query.cursor) search.set('cursor', query.cursor)
  return search.size ? `${path}?${search}` : path
}

/** `next_cursor` of a list answer. */
export const nextCursorField = t.Nullable(
  t.String({ description: 'Pass as `cursor` for the next page; null on the last' }),
)

/** The page size asked for, or a 422 at `limit`. */
export function pageLimit(limit: number = DEFAULT_LIMIT): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw appError(PageErrors.LIMIT_INVALID, 422, { loc: ['query', 'limit'] })
  return limit
}

const ID = /^[A-Za-z0-9_-]{1,64}$/
export const encodeCursor = (id: string) => Buffer.from(id, 'utf8').toString('base64url')

/** The id a cursor carries, or a 422 at `cursor` for one this list never handed out. */
export function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!ID.test(id) || encodeCursor(id) !== cursor)
    throw appError(PageErrors.CURSOR_INVALID, 422, { loc: ['query', 'cursor'] })
  return id
}

/** `next_cursor` of a page fetched with one row more than `limit`; null on the last page. */
export function nextCursor<R>(rows: R[], limit: number, idOf: (row: R) => string): string | null {
  const last = rows.length > limit ? rows[limit - 1] : undefined
  return last === undefined ? null : encodeCursor(idOf(last))
}

/** A LIKE pattern (with `ESCAPE '\'`) matching what starts with `q`, any case; `%` and `_` match literally. */
export const likePrefix = (q: string) => `${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** likePrefix's rule for a row at hand (would the search `q` list it?): one of `texts` starts with `q`, any case. */
export const startsWithSearch = (q: string, ...texts: (string | null)[]) =>
  texts.some((text) => text?.toLowerCase().startsWith(q.toLowerCase()))
