import type { PropsWithChildren } from '@kitajs/html'
import { Shell, type ShellUser } from './layout'

/**
 * A message of a page or a form, the dashboard's and the hosted pages' alike: `message` (escaped,
 * nothing drawn when empty) or markup of the caller's as children.
 */
export function Alert({
  kind,
  message,
  children,
}: PropsWithChildren<{ kind: 'error' | 'ok' | 'warn'; message?: string | null }>) {
  if (message === null || message === '' || (message === undefined && !children)) return ''
  return (
    <div class={`alert ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {message === undefined ? children : <span safe>{message}</span>}
    </div>
  )
}

export function FieldError({ id, message }: { id: string; message?: string }) {
  if (!message) return ''
  return (
    <p class="field-error" id={id} safe>
      {message}
    </p>
  )
}

/** A button that copies `value`: public/app.js copies data-copy on click (CSP: no inline script). */
export function CopyButton({ value }: { value: string }) {
  return (
    <button type="button" class="btn secondary small" data-copy={value}>
      Copy
    </button>
  )
}

/** A value with a button that copies it (credentials, issuer URLs). */
export function Copyable({ label, value }: { label: string; value: string }) {
  return (
    <div class="secret">
      <code title={label} safe>
        {value}
      </code>
      <CopyButton value={value} />
    </div>
  )
}

/**
 * A value to paste elsewhere, in a read-only field beside a button that copies it: what a user
 * registers at another service, such as a redirect URI (a long one scrolls in the field).
 */
export function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  return (
    <div class="secret">
      <input id={id} type="text" readonly value={value} aria-label={label} spellcheck="false" />
      <CopyButton value={value} />
    </div>
  )
}

/**
 * A labelled one-line input with its hint and its error (`#<id>-error`), for the forms that answer
 * 422 with the values as typed. A password input is never given a value: pass none.
 */
export function TextField({
  id,
  name,
  label,
  value,
  error,
  hint,
  type = 'text',
  required,
  maxlength,
  placeholder,
  autocomplete,
}: {
  id: string
  name: string
  label: string
  value?: string
  error?: string
  hint?: string
  type?: 'text' | 'password'
  required?: boolean
  maxlength?: number
  placeholder?: string
  autocomplete?: string
}) {
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ')
  return (
    <>
      <label for={id} safe>
        {label}
      </label>
      <input
        id={id}
        name={name}
        type={type}
        value={type === 'password' ? undefined : value}
        required={required}
        maxlength={maxlength === undefined ? undefined : String(maxlength)}
        placeholder={placeholder}
        autocomplete={autocomplete}
        spellcheck="false"
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described || undefined}
      />
      {hint ? (
        <p class="hint" id={`${id}-hint`} safe>
          {hint}
        </p>
      ) : (
        ''
      )}
      <FieldError id={`${id}-error`} message={error} />
    </>
  )
}

export function EmptyState({ title, children }: PropsWithChildren<{ title: string }>) {
  return (
    <div class="empty">
      <p>
        <strong safe>{title}</strong>
      </p>
      {children}
    </div>
  )
}

/** The breadcrumb above a page inside a workspace (every feature's pages): its name, linking to its overview. */
function WorkspaceCrumb({ w }: { w: { id: string; name: string } }) {
  return (
    <p class="hint">
      <a href={`/app/workspaces/${w.id}`} safe>
        {w.name}
      </a>{' '}
      /
    </p>
  )
}

/** An entry of the workspace sidebar: a path below `/app/workspaces/{id}/`, or one from `/`. */
export interface SidebarLink {
  label: string
  path: string
}

/** The entry a page at `here` belongs to: the longest path that is `here` or a folder of it. */
function currentOf(nav: readonly SidebarLink[], here: string): SidebarLink | undefined {
  const within = (p: string) => (p === '' ? here === '' : here === p || here.startsWith(`${p}/`))
  return nav
    .filter((e) => !e.path.startsWith('/') && within(e.path))
    .reduce<SidebarLink | undefined>(
      (best, e) => (best && best.path.length >= e.path.length ? best : e),
      undefined,
    )
}

/** The workspace's sidebar (a scrolling tab bar on a narrow screen), its current page marked. */
function WorkspaceSidebar({
  w,
  nav,
  here,
}: {
  w: { id: string }
  nav: readonly SidebarLink[]
  here: string
}) {
  const current = currentOf(nav, here)
  const hrefOf = (path: string) =>
    path.startsWith('/') ? path : `/app/workspaces/${w.id}${path === '' ? '' : `/${path}`}`
  return (
    <nav class="sidebar" aria-label="Workspace">
      <ul>
        {nav.map((e) => (
          <li>
            <a href={hrefOf(e.path)} aria-current={e === current ? 'page' : undefined} safe>
              {e.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  )
}

/**
 * A page inside a workspace: the shell (title "<workspace> <title>", Workspaces current), the
 * workspace sidebar (`nav`, the features' entries, with `here` the page's path below the
 * workspace), the crumb, the heading and, when given, the lead paragraph under it; the body follows.
 */
export function WorkspacePage({
  w,
  user,
  nav,
  here,
  heading,
  headingId,
  title = heading,
  lead,
  children,
}: PropsWithChildren<{
  w: { id: string; name: string }
  user: ShellUser
  nav: readonly SidebarLink[]
  /** The page's path below `/app/workspaces/{id}/` (`` for the overview), which marks its entry. */
  here: string
  /** The h1. */
  heading: string
  /** The h1's id, for a page whose htmx answers redraw it (out of band). */
  headingId?: string
  /** What follows the workspace's name in the title, when not the heading ("apps" for "Applications"). */
  title?: string
  lead?: JSX.Element
}>) {
  return (
    <Shell title={title ? `${w.name} ${title}` : w.name} user={user} section="workspaces">
      <div class="workspace">
        <WorkspaceSidebar w={w} nav={nav} here={here} />
        <div class="workspace-body">
          {here === '' ? (
            <p class="hint">
              <a href="/app/workspaces">Workspaces</a> /
            </p>
          ) : (
            <WorkspaceCrumb w={w} />
          )}
          <h1 id={headingId} safe>
            {heading}
          </h1>
          {lead === undefined ? '' : <p class="lead">{lead}</p>}
          {children}
        </div>
      </div>
    </Shell>
  )
}

/** Search by prefix: a plain GET form, so the URL can be shared and paged (`#<prefix>-search`, `#<prefix>-q`). */
export function SearchForm({
  prefix,
  action,
  q,
  placeholder,
}: {
  prefix: string
  action: string
  q: string
  placeholder: string
}) {
  return (
    <form id={`${prefix}-search`} method="get" action={action}>
      <label for={`${prefix}-q`}>Search</label>
      <input id={`${prefix}-q`} name="q" type="search" maxlength="320" placeholder={placeholder} value={q} />{' '}
      <button class="btn secondary" type="submit">
        Search
      </button>
    </form>
  )
}

/**
 * How many a list holds, over its table (`#<id>`: "3 users", "1 user found" under a search). An
 * htmx answer that adds a row or takes one away sends it again with `oob`, so the count moves with
 * the rows.
 */
export function ListCount({
  id,
  total,
  noun,
  found = false,
  addedHidden = false,
  oob = false,
}: {
  id: string
  total: number
  /** Singular and plural. */
  noun: readonly [string, string]
  found?: boolean
  /** A row was just added that the search does not find, so the table does not show it. */
  addedHidden?: boolean
  oob?: boolean
}) {
  return (
    <p class="hint" id={id} hx-swap-oob={oob ? 'true' : undefined} safe>
      {`${total} ${total === 1 ? noun[0] : noun[1]}${found ? ' found' : ''}${addedHidden ? ' (1 added, hidden by this search)' : ''}`}
    </p>
  )
}

/** "First page" and "Next page" links of a paged list; nothing when it has one page. */
export function Pager({
  first,
  next,
  nextId,
}: {
  first: string | null
  next: string | null
  nextId: string
}) {
  if (!first && !next) return ''
  return (
    <p class="row">
      {first ? <a href={first}>First page</a> : <span></span>}
      {next ? (
        <a id={nextId} href={next}>
          Next page
        </a>
      ) : (
        ''
      )}
    </p>
  )
}

/**
 * A form htmx posts, whose answer replaces the inside of `target`: with "Some fields need
 * attention" over it when `invalid`, and `done` (what it did) as a note.
 */
export function HxForm({
  id,
  action,
  target,
  invalid,
  done,
  swap = 'innerHTML',
  children,
}: PropsWithChildren<{
  id: string
  action: string
  target: string
  invalid: boolean
  done?: string
  /** How the answer replaces the target: `innerHTML`, or `outerHTML` for a section the answer redraws whole. */
  swap?: 'innerHTML' | 'outerHTML'
}>) {
  return (
    <form id={id} method="post" action={action} hx-post={action} hx-target={target} hx-swap={swap}>
      {invalid ? <Alert kind="error">Some fields need attention.</Alert> : ''}
      {done ? (
        <Alert kind="ok">
          <span safe>{done}</span>
        </Alert>
      ) : (
        ''
      )}
      {children}
    </form>
  )
}

/**
 * A table whose rows an htmx answer can add to (`#<rows>`, see AppendedRow) or take away: its heads,
 * and a row saying `empty` (`#<rows>-empty`) while it has no other. That row is in a body of its own,
 * always, which the stylesheet hides while `#<rows>` has a row: so the line comes back when the last
 * row is deleted, and goes when one is added, with no answer having to know what else the page lists.
 */
export function RowsTable({
  heads,
  rows,
  empty,
  children,
}: PropsWithChildren<{ heads: string[]; rows: string; empty: string }>) {
  return (
    <table>
      <thead>
        <tr>
          {heads.map((head) => (
            <th safe>{head}</th>
          ))}
        </tr>
      </thead>
      <tbody class="rows-empty">
        <tr id={`${rows}-empty`}>
          <td colspan={String(heads.length)} class="empty" safe>
            {empty}
          </td>
        </tr>
      </tbody>
      <tbody id={rows}>{children}</tbody>
    </table>
  )
}

/** A row an htmx answer adds to RowsTable `#<rows>` (out of band); the stylesheet hides its empty row. */
export function AppendedRow({ rows, children }: PropsWithChildren<{ rows: string }>) {
  return (
    // Table parts outside a table must travel inside <template> or the HTML parser drops them.
    <template>
      <tbody hx-swap-oob={`beforeend:#${rows}`}>{children}</tbody>
    </template>
  )
}

/**
 * "Try sign-in": a real sign-in at a workspace's hosted pages through the dashboard's own client of
 * its instance (features/try-sign-in), ending on a page of the ID token's claims, userinfo and `amr`.
 * One component for every page that offers it (the workspace, its apps list, an app's page). htmx
 * posts it (with the CSRF header the shell sets) and follows HX-Redirect to the instance: a
 * navigation, which `form-action` does not govern on a host-based issuer. A refusal shows beside it.
 */
export function TrySignInButton({
  workspaceId,
  label = 'Try sign-in',
  small,
}: {
  workspaceId: string
  label?: string
  small?: boolean
}) {
  return (
    <span class="try-sign-in">
      <button
        type="button"
        class={small ? 'btn secondary small' : 'btn secondary'}
        hx-post={`/app/workspaces/${workspaceId}/try`}
        hx-target="next .try-sign-in-error"
        title="Sign in at this workspace's hosted pages as your users do, and see the ID token and userinfo"
        safe
      >
        {label}
      </button>
      <span class="try-sign-in-error"></span>
    </span>
  )
}

/**
 * The banner of a page whose mail goes nowhere (no SMTP server for it and no dev outbox), with the
 * fix: the platform's mail (`workspaceId` absent) or one workspace's, which its own server fixes too.
 */
export function NoMailBanner({ workspaceId }: { workspaceId?: string }) {
  return (
    <div id="mail-banner">
      <Alert kind="warn">
        {workspaceId ? (
          <>
            <strong>This workspace's mail is not sent:</strong> neither it nor the platform has a mail server,
            and the development outbox is off, so invitations, email verification and password resets go
            nowhere. Set up this workspace's server in{' '}
            <a href={`/app/workspaces/${workspaceId}/settings/smtp`}>Settings → SMTP</a>, or set{' '}
            <code>SMTP_URL</code> on the server. Until then the platform administrator copies invitation and
            verification links from the Members and Users pages.
          </>
        ) : (
          <>
            <strong>Mail is not sent:</strong> this install has no mail server (<code>SMTP_URL</code> is
            unset) and its development outbox is off, so sign-up verification, invitations and password resets
            go nowhere. Set <code>SMTP_URL</code> (and <code>SMTP_FROM</code>) and restart; on a development
            machine, leave <code>DEV_OUTBOX</code> unset to keep mail in the outbox. Until then the
            administrator copies invitation and verification links from a workspace's Members and Users pages.
          </>
        )}
      </Alert>
    </div>
  )
}

/** A working link is a credential: never kept by a cache. */
export const NO_STORE = { 'cache-control': 'no-store' }

/**
 * A fresh invitation or verification link whose mail went nowhere, for the platform administrator
 * to copy and hand over by other means.
 */
export function HandOverLink({ email, link, expiresAt }: { email: string; link: string; expiresAt: string }) {
  return (
    <>
      <CopyField id="handover-link" label={`Link for ${email}`} value={link} />
      <p class="hint" safe>
        {`Hand it to ${email} yourself: it works once, until ${expiresAt.slice(0, 16).replace('T', ' ')} UTC. Any link made before no longer works.`}
      </p>
    </>
  )
}
