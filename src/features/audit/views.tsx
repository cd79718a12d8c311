import { Alert } from '../../shared/views/components'
import type { AuditModel } from './model'
import type { AuditFilters } from './service'

const FILTERS = ['actor', 'action', 'since', 'until'] as const

const auditPagePath = (workspaceId: string) => `/app/workspaces/${workspaceId}/settings/audit-log`

/** The filters that are set, as a query string (with `extra`, e.g. the cursor or `format=csv`). */
const queryOf = (filters: AuditFilters, extra: Record<string, string> = {}) => {
  const params = new URLSearchParams(extra)
  for (const name of FILTERS) {
    const value = filters[name]?.trim()
    if (value) params.set(name, value)
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}

const pageHref = (workspaceId: string, filters: AuditFilters, cursor?: string) =>
  `${auditPagePath(workspaceId)}${queryOf(filters, cursor ? { cursor } : {})}`

/** The export of the same filters: the JSON API's own CSV, which a dashboard session may call. */
const csvHref = (workspaceId: string, filters: AuditFilters) =>
  `/v1/workspaces/${workspaceId}/audit-log${queryOf(filters, { format: 'csv' })}`

const when = (iso: string) => iso.slice(0, 19).replace('T', ' ')

/** Browsers and systems a user agent is named by, most specific first (Edge and Opera say Chrome too). */
const BROWSERS: [RegExp, string][] = [
  [/\bEdg\/(\d+)/, 'Edge'],
  [/\bOPR\/(\d+)/, 'Opera'],
  [/\bFirefox\/(\d+)/, 'Firefox'],
  [/\bHeadlessChrome\/(\d+)/, 'Headless Chrome'],
  [/\bChrome\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
]
const SYSTEMS: [RegExp, string][] = [
  [/\bAndroid\b/, 'Android'],
  [/\b(?:iPhone|iPad)\b/, 'iOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]
const UA_SHOWN = 40

/**
 * A user agent as a person reads it: `Firefox 128 on Linux`; anything else (a CLI, a script) cut to
 * UA_SHOWN characters. The whole string is the cell's title.
 */
function shortUserAgent(ua: string): string {
  for (const [pattern, browser] of BROWSERS) {
    const version = pattern.exec(ua)?.[1]
    if (!version) continue
    const system = SYSTEMS.find(([p]) => p.test(ua))?.[1]
    return system ? `${browser} ${version} on ${system}` : `${browser} ${version}`
  }
  return ua.length > UA_SHOWN ? `${ua.slice(0, UA_SHOWN - 1)}…` : ua
}
const shown = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value))

/** What an entry changed: a line per field, `before → after`. */
function Changes({ changes }: { changes: AuditModel.Item['changes'] }) {
  const fields = Object.entries(changes)
  if (fields.length === 0) return <span class="hint">—</span>
  return (
    <ul class="changes">
      {fields.map(([field, change]) => (
        <li>
          <code safe>{field}</code>{' '}
          <span safe>
            {'from' in change ? `${shown(change.from)} → ${shown(change.to)}` : shown(change.to)}
          </span>
        </li>
      ))}
    </ul>
  )
}

/** A link that redraws the entries in place (and, without script, loads the page it names). */
function SwapLink({ href, id, text }: { href: string; id?: string; text: string }) {
  return (
    <a id={id} href={href} hx-get={href} hx-target="#audit-log" hx-swap="outerHTML" hx-push-url="true" safe>
      {text}
    </a>
  )
}

/** A link narrowing the list to one actor or action, the other filters kept. */
function FilterLink({
  workspaceId,
  filters,
  set,
  text,
}: {
  workspaceId: string
  filters: AuditFilters
  set: AuditFilters
  text: string
}) {
  return <SwapLink href={pageHref(workspaceId, { ...filters, ...set })} text={text} />
}

function EntryRow({
  workspaceId,
  filters,
  entry: e,
  name,
}: {
  workspaceId: string
  filters: AuditFilters
  entry: AuditModel.Item
  name?: string
}) {
  return (
    <tr id={`audit-${e.id}`}>
      <td>
        <time datetime={e.at} safe>
          {when(e.at)}
        </time>
      </td>
      <td>
        <FilterLink
          workspaceId={workspaceId}
          filters={filters}
          set={{ actor: e.actor }}
          text={name ?? e.actor}
        />
        {name ? (
          <p class="hint" safe>
            {e.actor}
          </p>
        ) : (
          ''
        )}
      </td>
      <td>
        <FilterLink workspaceId={workspaceId} filters={filters} set={{ action: e.action }} text={e.action} />
      </td>
      <td>
        <span safe>{e.target.type}</span>
        <p class="hint" safe>
          {e.target.id}
        </p>
      </td>
      <td>
        <span safe>{e.ip ?? '—'}</span>
        {e.user_agent ? (
          <p class="hint user-agent" title={e.user_agent} safe>
            {shortUserAgent(e.user_agent)}
          </p>
        ) : (
          ''
        )}
      </td>
      <td>
        <Changes changes={e.changes} />
      </td>
    </tr>
  )
}

/**
 * The entries as filtered, with "Older entries" (the next cursor) and the CSV download of the same
 * filters: the part a filter or a page redraws (`#audit-log`). `error` is a filter that was refused.
 */
export function AuditResults({
  workspaceId,
  filters,
  page,
  names,
  cursor,
  error,
}: {
  workspaceId: string
  filters: AuditFilters
  page: AuditModel.List
  names: Map<string, string>
  cursor?: string
  error?: string
}) {
  const filtered = FILTERS.some((f) => filters[f]?.trim())
  const count = `${page.total} ${page.total === 1 ? 'entry' : 'entries'}${filtered ? ' match' : ''}`
  const older = page.next_cursor ? pageHref(workspaceId, filters, page.next_cursor) : null
  const newest = pageHref(workspaceId, filters)
  return (
    <div id="audit-log">
      {error ? (
        <Alert kind="error">
          <span safe>{error}</span>
        </Alert>
      ) : (
        ''
      )}
      <div class="row">
        <p class="hint" id="audit-count" safe>
          {count}
        </p>
        <a
          id="audit-csv"
          class="btn secondary small"
          href={csvHref(workspaceId, filters)}
          download={`audit-log-${workspaceId}.csv`}
        >
          Download CSV
        </a>
      </div>
      <div class="table-scroll">
        <table class="audit">
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Actor</th>
              <th>Action</th>
              <th>Target</th>
              <th>From</th>
              <th>Changes</th>
            </tr>
          </thead>
          <tbody id="audit-rows">
            {page.items.length === 0 ? (
              <tr id="audit-empty">
                <td colspan="6" class="empty">
                  {filtered ? 'No entry matches these filters.' : 'Nothing has been recorded yet.'}
                </td>
              </tr>
            ) : (
              ''
            )}
            {page.items.map((entry) => (
              <EntryRow
                workspaceId={workspaceId}
                filters={filters}
                entry={entry}
                name={names.get(entry.actor)}
              />
            ))}
          </tbody>
        </table>
      </div>
      {older || cursor ? (
        <p class="row">
          {cursor ? <SwapLink href={newest} text="Newest entries" /> : <span></span>}
          {older ? <SwapLink id="audit-older" href={older} text="Older entries" /> : ''}
        </p>
      ) : (
        ''
      )}
    </div>
  )
}

/** What the actor and action filters offer (the log's own actors and actions). */
export interface FilterChoices {
  actors: { value: string; label: string }[]
  actions: string[]
}

/** An action's family (`app` of `app.created`), which the filter also offers whole (`app.*`). */
const familyOf = (action: string) => action.split('.')[0]!

/**
 * A choice of one filter: any, or one of `children`; a value none of them holds (a shared link's,
 * `member.invitation.*`) stays chosen, as it was given.
 */
function ChoiceField({
  name,
  label,
  any,
  value,
  offered,
  children,
}: {
  name: 'actor' | 'action'
  label: string
  any: string
  value: string
  /** The values `children` offer. */
  offered: string[]
  children: JSX.Element[]
}) {
  return (
    <div>
      <label for={`audit-${name}`} safe>
        {label}
      </label>
      <select id={`audit-${name}`} name={name}>
        <option value="" safe>
          {any}
        </option>
        {value && !offered.includes(value) ? (
          <option value={value} selected safe>
            {value}
          </option>
        ) : (
          ''
        )}
        {children}
      </select>
    </div>
  )
}

function ActorChoice({ choices, value }: { choices: FilterChoices['actors']; value: string }) {
  return (
    <ChoiceField name="actor" label="Actor" any="Anyone" value={value} offered={choices.map((c) => c.value)}>
      {choices.map((c) => (
        <option value={c.value} selected={c.value === value} safe>
          {c.label}
        </option>
      ))}
    </ChoiceField>
  )
}

/** The actions by family: each family whole (`app.*`), then its actions. */
function ActionChoice({ actions, value }: { actions: string[]; value: string }) {
  const families = [...new Set(actions.map(familyOf))]
  const offered = [...families.map((f) => `${f}.*`), ...actions]
  return (
    <ChoiceField name="action" label="Action" any="Any action" value={value} offered={offered}>
      {families.map((family) => (
        <optgroup label={family}>
          <option value={`${family}.*`} selected={value === `${family}.*`} safe>
            {`Every ${family.replaceAll('_', ' ')} action`}
          </option>
          {actions
            .filter((a) => familyOf(a) === family)
            .map((a) => (
              <option value={a} selected={a === value} safe>
                {a}
              </option>
            ))}
        </optgroup>
      ))}
    </ChoiceField>
  )
}

/** The filters: a GET form, so a filtered list has a URL to share; htmx redraws only the entries. */
export function AuditFilterForm({
  workspaceId,
  filters,
  choices,
}: {
  workspaceId: string
  filters: AuditFilters
  choices: FilterChoices
}) {
  const path = auditPagePath(workspaceId)
  const field = (name: 'since' | 'until', label: string, placeholder: string) => (
    <div>
      <label for={`audit-${name}`} safe>
        {label}
      </label>
      <input
        id={`audit-${name}`}
        name={name}
        type="text"
        maxlength="80"
        placeholder={placeholder}
        value={filters[name] ?? ''}
      />
    </div>
  )
  return (
    <form
      id="audit-filters"
      class="filters"
      method="get"
      action={path}
      hx-get={path}
      hx-target="#audit-log"
      hx-swap="outerHTML"
      hx-push-url="true"
    >
      <ActorChoice choices={choices.actors} value={filters.actor?.trim() ?? ''} />
      <ActionChoice actions={choices.actions} value={filters.action?.trim() ?? ''} />
      {field('since', 'Since (UTC)', '2025-01-31T09:00')}
      {field('until', 'Until (UTC)', '2025-02-01')}
      <div>
        <button class="btn secondary" type="submit">
          Filter
        </button>{' '}
        <a href={path}>Clear</a>
      </div>
    </form>
  )
}
