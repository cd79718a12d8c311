import type { PropsWithChildren } from '@kitajs/html'
import { listPageUrl, searchOfPage } from '../pagination'
import {
  AppendedRow,
  ListCount,
  NO_STORE,
  Pager,
  SearchForm,
  type SidebarLink,
  WorkspacePage,
} from './components'
import { html, shellUser } from './respond'

/**
 * The shapes the dashboard's pages repeat, each written once: a workspace settings page, a
 * searched and paged list, and a row's delete. Markup, ids and status codes are the pages' own.
 */

type Caller = Parameters<typeof shellUser>[0]
type Shown = { id: string; name: string }

/** What a workspace settings page says above its section. */
export interface SettingsPageShape {
  nav: readonly SidebarLink[]
  /** The page's path below `/app/workspaces/{id}/`, which marks its sidebar entry. */
  here: string
  heading: string
  title?: string
  lead?: JSX.Element
}

/**
 * A workspace settings page (SMTP, branding, identity providers, login policy, machine keys,
 * webhooks): `get` draws the section in the workspace's shell; `answer` is a form's POST, the
 * section redrawn, 422 with what was typed and why, or 200 once done. Never stored: sections
 * carry one-time secrets and what this caller may change.
 */
export function settingsPage(shape: SettingsPageShape) {
  const page = (caller: Caller, w: Shown, section: JSX.Element) => (
    <WorkspacePage {...shape} w={w} user={shellUser(caller)}>
      {section}
    </WorkspacePage>
  )
  return {
    page,
    /** The GET handler: the section as this caller may see it (read scope or more), in the shell. */
    get:
      <W extends Shown>(section: (w: W, scopes: readonly string[]) => JSX.Element | Promise<JSX.Element>) =>
      async ({
        principal,
        scopes,
        workspace,
      }: {
        principal: Caller
        scopes: readonly string[]
        workspace: W
      }) =>
        html(page(principal, workspace, await section(workspace, scopes)), 200, NO_STORE),
    answer: (ok: boolean, section: JSX.Element) => html(section, ok ? 200 : 422, NO_STORE),
  }
}

/**
 * A paged list (users, tenants, a tenant's members): the search box when it has a placeholder, the
 * count, the rows, and the pager, which keeps the search. Its ids come from `prefix`: `{prefix}-search`,
 * `{prefix}-count` and `{prefix}s-next`.
 */
export function PagedList({
  path,
  prefix,
  placeholder,
  q = '',
  noun,
  page,
  cursor,
  children,
}: PropsWithChildren<{
  path: string
  prefix: string
  placeholder?: string
  q?: string
  noun: readonly [string, string]
  page: { total: number; next_cursor: string | null }
  /** The cursor this page was asked with: a later page links back to the first. */
  cursor: string | undefined
}>) {
  return (
    <>
      {placeholder ? <SearchForm prefix={prefix} action={path} q={q} placeholder={placeholder} /> : ''}
      <ListCount id={`${prefix}-count`} total={page.total} noun={noun} found={q !== ''} />
      {children}
      <Pager
        nextId={`${prefix}s-next`}
        first={cursor ? listPageUrl(path, { q }) : null}
        next={page.next_cursor ? listPageUrl(path, { q, cursor: page.next_cursor }) : null}
      />
    </>
  )
}

/**
 * A list whose count follows its rows (users, tenants, a tenant's members): the id of its count,
 * its noun, singular and plural, and how many the search `q` finds ('' for all).
 */
export interface CountedList {
  count: string
  noun: readonly [string, string]
  totalOf: (q: string) => Promise<number>
}

/**
 * A list's count again, out of band, after a row came or went, within the search the page shows
 * (read from the request's page URL; none without a request).
 */
export function CountAgain({ list, request }: { list: CountedList; request?: Request }) {
  return <ListCountOf list={list} q={request ? searchOfPage(request) : ''} />
}

async function ListCountOf({
  list,
  q,
  addedHidden,
}: {
  list: CountedList
  q: string
  addedHidden?: boolean
}) {
  const total = await list.totalOf(q)
  return (
    <ListCount
      id={list.count}
      total={total}
      noun={list.noun}
      found={q !== ''}
      addedHidden={addedHidden}
      oob
    />
  )
}

/**
 * What a list shows once a row (`children`) was added: the row joining RowsTable `#<rows>` when the
 * search the page shows finds it (`found`, the list's own search rule), and the count again. A row
 * the search would not find stays out of the table, which lists only what the search finds; the
 * count says it was added.
 */
export function RowAdded({
  list,
  found,
  request,
  children,
}: PropsWithChildren<{
  list: CountedList & { rows: string }
  found: (q: string) => boolean
  request: Request
}>) {
  const q = searchOfPage(request)
  const shown = q === '' || found(q)
  return (
    <>
      {shown ? <AppendedRow rows={list.rows}>{children}</AppendedRow> : ''}
      <ListCountOf list={list} q={q} addedHidden={!shown} />
    </>
  )
}

/** The answer once a list's row is gone: a 200 with only what changed beside it, out of band (its count), or nothing; htmx swaps the row out (a 204 would leave it in place). */
export const rowRemoved = (beside: JSX.Element = '') => html(beside)

/** A DELETE of a list's row: the service removes it and writes its audit entry, then `rowRemoved`. */
export async function removeRow(removal: Promise<unknown>, beside?: () => JSX.Element): Promise<Response> {
  await removal
  return rowRemoved(beside?.())
}
