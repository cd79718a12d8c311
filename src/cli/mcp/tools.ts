import type { TObject, TSchema } from '@sinclair/typebox'
import { holdsScope, tenantReach } from '../../access/scopes'
import type { Effect, Need, ToolSpec } from './catalog'

type Json = Record<string, unknown>

/** A tool as `tools/list` answers it (MCP 2025-06-18 "Tool"). */
interface ListedTool {
  name: string
  description: string
  inputSchema: { type: 'object'; properties: Json; required?: string[]; additionalProperties: false }
  annotations: {
    readOnlyHint: boolean
    destructiveHint: boolean
    idempotentHint: boolean
    openWorldHint: false
  }
}

/** Whether a key granted `scopes` may call a tool that needs `need` (the route's own guard rule). */
export function allows(scopes: readonly string[], need: Need): boolean {
  return typeof need === 'string' ? holdsScope(scopes, need) : tenantReach(scopes, need.tenant) !== null
}

/**
 * A TypeBox schema as plain JSON Schema: its symbols dropped, and Elysia's `errorMessage` (form
 * messages, no JSON Schema keyword) left out.
 */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema), (key, value) => (key === 'errorMessage' ? undefined : value))
}

const WORKSPACE_NOTE = "Defaults to the key's workspace; a key acts on its own workspace only"

/** Where each input property goes in the request. */
interface InputPlan {
  path: string[]
  query: string[]
  body: string[]
}

/** The properties of an object model, without those in `omit`. */
const propertiesOf = (model: TObject | undefined, omit: string[] = []) =>
  Object.entries(model?.properties ?? {}).filter(([name]) => !omit.includes(name))

/**
 * A tool's input schema: the route's path parameters, query and body properties side by side, each
 * as its model declares it. workspace_id becomes optional (the key's own). A name in two parts of
 * a route would be ambiguous: refused when the catalog is built.
 */
function inputOf(spec: ToolSpec): { schema: ListedTool['inputSchema']; plan: InputPlan } {
  const properties: Json = {}
  const required: string[] = []
  const plan: InputPlan = { path: [], query: [], body: [] }
  const add = (part: keyof InputPlan, entries: [string, TSchema][], requiredOf: readonly string[]) => {
    for (const [name, schema] of entries) {
      if (name in properties) throw new Error(`tool ${spec.name}: "${name}" is in two parts of its route`)
      properties[name] = plain(schema)
      plan[part].push(name)
      if (requiredOf.includes(name) && name !== 'workspace_id') required.push(name)
    }
  }
  add('path', propertiesOf(spec.params), spec.params.required ?? [])
  properties.workspace_id = { ...(properties.workspace_id as Json), description: WORKSPACE_NOTE }
  add('query', propertiesOf(spec.query, spec.omitQuery), [])
  add('body', propertiesOf(spec.body), spec.body?.required ?? [])
  return {
    schema: {
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    },
    plan,
  }
}

const ANNOTATIONS: Record<Effect, Omit<ListedTool['annotations'], 'openWorldHint'>> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  create: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  update: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  destructive: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
}

/** A tool ready to list and call: what it is and how its arguments map onto its route. */
export interface Tool {
  spec: ToolSpec
  listed: ListedTool
  plan: InputPlan
}

export function buildTools(specs: ToolSpec[]): Tool[] {
  return specs.map((spec) => {
    const { schema, plan } = inputOf(spec)
    return {
      spec,
      plan,
      listed: {
        name: spec.name,
        description: spec.description,
        inputSchema: schema,
        // Closed world: a tool acts on this workspace's control plane and nothing beyond it.
        annotations: { ...ANNOTATIONS[spec.effect], openWorldHint: false },
      },
    }
  })
}

/** A call's request, or why its arguments name none. */
export type Built = { method: string; path: string; body?: Json } | { problem: string }

/** The request of a call: workspace_id defaults to the key's own, and no other is accepted. */
export function requestOf(tool: Tool, args: Json, keyWorkspace: string): Built {
  const known = new Set([...tool.plan.path, ...tool.plan.query, ...tool.plan.body])
  const unknown = Object.keys(args).filter((name) => !known.has(name))
  if (unknown.length) return { problem: `${tool.spec.name} takes no argument ${unknown.join(', ')}` }
  const values: Json = { ...args, workspace_id: args.workspace_id ?? keyWorkspace }
  if (values.workspace_id !== keyWorkspace)
    return {
      problem: `this machine key belongs to workspace ${keyWorkspace}; it cannot act on ${String(values.workspace_id)}`,
    }
  let path = tool.spec.path
  for (const name of tool.plan.path) {
    const value = values[name]
    if (typeof value !== 'string' || !value) return { problem: `${tool.spec.name} needs ${name}` }
    path = path.replace(`{${name}}`, encodeURIComponent(value))
  }
  const query = new URLSearchParams()
  for (const name of tool.plan.query) if (values[name] !== undefined) query.set(name, String(values[name]))
  if (query.size) path += `?${query}`
  if (!tool.spec.body) return { method: tool.spec.method, path }
  const body: Json = {}
  for (const name of tool.plan.body) if (name in values) body[name] = values[name]
  return { method: tool.spec.method, path, body }
}

/** How a record is named in a summary: its name, email, slug, URL or action, and its id. */
function label(item: Json): string {
  const name = ['name', 'email', 'slug', 'url', 'action', 'event_type'].find(
    (k) => typeof item[k] === 'string' && item[k],
  )
  const id = item.id ?? item.user_id ?? item.account_id
  const parts = [name ? String(item[name]) : null, id ? `(${String(id)})` : null].filter(Boolean)
  return parts.join(' ') || Object.keys(item).slice(0, 4).join(', ')
}

const LISTED_IN_SUMMARY = 20

/** The concise text of a result: what happened, and what a list holds (its first items). */
export function summaryOf(tool: Tool, result: unknown): string {
  const { noun } = tool.spec
  if (!result || typeof result !== 'object') return `${tool.spec.name}: done`
  const r = result as Json
  if (Array.isArray(r.items)) {
    const items = r.items as Json[]
    const total = typeof r.total === 'number' ? r.total : items.length
    const head = `${total} ${noun}${total === 1 ? '' : 's'}${items.length < total ? ` (${items.length} on this page${r.next_cursor ? `, next cursor ${String(r.next_cursor)}` : ''})` : ''}`
    const lines = items.slice(0, LISTED_IN_SUMMARY).map((item) => `- ${label(item)}`)
    if (items.length > LISTED_IN_SUMMARY) lines.push(`- … ${items.length - LISTED_IN_SUMMARY} more`)
    return [head, ...lines].join('\n')
  }
  if (r.deleted === true) return `${noun} deleted`
  const verb = { read: '', create: 'created: ', update: 'updated: ', destructive: 'done: ' }[tool.spec.effect]
  return `${noun} ${verb}${label(r)}`
}
