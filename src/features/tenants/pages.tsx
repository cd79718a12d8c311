import { Elysia, t } from 'elysia'
import type { AuthPlugin } from '../../access/guard'
import { holdsScope } from '../../access/scopes'
import type { Core } from '../../core'
import { AppError } from '../../shared/errors'
import { defineForm, type FormField, formField, sentText } from '../../shared/forms'
import { listPageQuery, startsWithSearch } from '../../shared/pagination'
import { type SidebarLink, WorkspacePage } from '../../shared/views/components'
import { CountAgain, PagedList, RowAdded, removeRow } from '../../shared/views/crud'
import { Shell } from '../../shared/views/layout'
import { html, navigate, shellUser } from '../../shared/views/respond'
import { WorkspaceModel } from '../workspaces/model'
import type { Workspace } from '../workspaces/service'
import { TenantErrors } from './errors'
import { TenantModel } from './model'
import { createTenantService } from './service'
import { createTenantMemberService } from './service.members'
import {
  AddMemberForm,
  CreateTenantForm,
  MemberAdded,
  MemberTable,
  TenantFacts,
  TenantRow,
  TenantTable,
  tenantsPath,
} from './views'

const views = { detail: { tags: ['views'] } }
const TENANTS = ['tenant', 'tenants'] as const
const MEMBERS = ['member', 'members'] as const

/** A textarea of JSON: parsed for the model to check; what does not parse is kept as text, which it refuses. */
const jsonField: FormField = {
  read: (raw) => {
    if (!raw.trim()) return undefined
    try {
      return JSON.parse(raw)
    } catch {
      return raw
    }
  },
}

/** The form reads into the API's model: the rules and their messages are the API's. The slug is exact. */
const createForm = defineForm(TenantModel.create, {
  name: formField.text,
  slug: { read: (raw) => raw },
  metadata: jsonField,
})

/** The add-member form: one field, an email or a user id. */
const memberForm = defineForm(t.Object({ user: t.String({ minLength: 1, maxLength: 320 }) }), {
  user: formField.text,
})

/**
 * The Tenants page of a workspace (list, search, pages, create) and each tenant's page (its facts,
 * members added by email or id and removed, deleting it). Members of the workspace read; changes
 * take `workspace:write`, as on the API.
 */
export function tenantPages(core: Core, auth: AuthPlugin<Workspace>, sidebar: SidebarLink[]) {
  const tenantService = createTenantService(core)
  const members = createTenantMemberService(core)
  const params = WorkspaceModel.params
  const tenantParams = TenantModel.params
  // The tables and their counts, which follow a create, an add or a remove.
  const tenantList = (w: Workspace) => ({
    rows: 'tenant-rows',
    count: 'tenant-count',
    noun: TENANTS,
    totalOf: async (q: string) => (await tenantService.list(w, 'all', { q, limit: 1 })).total,
  })
  const memberList = (w: Workspace, tenantId: string) => ({
    count: 'tenant-member-count',
    noun: MEMBERS,
    totalOf: async () => (await members.list(w, 'all', tenantId, { limit: 1 })).total,
  })

  return new Elysia({ name: 'tenant-pages' })
    .use(auth)
    .get(
      '/app/workspaces/:workspace_id/tenants',
      async ({ principal, scopes, workspace: w, query }) => {
        const q = query.q?.trim() ?? ''
        const page = await tenantService.list(w, 'all', { q, cursor: query.cursor })
        const path = tenantsPath(w.id)
        return html(
          <WorkspacePage
            nav={sidebar}
            here="tenants"
            w={w}
            user={shellUser(principal)}
            heading="Tenants"
            title="tenants"
            lead={
              <>
                Your customers' organisations. Their members are users of this workspace; apps read their
                tenants from the <code>tenants</code> claim.
              </>
            }
          >
            <div class="panel">
              <PagedList
                path={path}
                prefix="tenant"
                placeholder="Slug or name"
                q={q}
                noun={TENANTS}
                page={page}
                cursor={query.cursor}
              >
                <TenantTable workspaceId={w.id} tenants={page.items} q={q} />
              </PagedList>
            </div>
            {holdsScope(scopes, 'workspace:write') ? (
              <div class="panel">
                <h2>Create a tenant</h2>
                <div id="tenant-create">
                  <CreateTenantForm workspaceId={w.id} />
                </div>
              </div>
            ) : (
              ''
            )}
          </WorkspacePage>,
        )
      },
      { params, query: listPageQuery, scope: 'workspace:read', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/tenants',
      async ({ actor, workspace: w, body, request }) => {
        try {
          const sent = await createForm.submit(body, (input) => tenantService.create(w, actor, input))
          if (!sent.ok)
            return html(
              <CreateTenantForm workspaceId={w.id} values={sent.values} errors={sent.errors} />,
              422,
            )
          const tenant = sent.result
          const found = (q: string) => startsWithSearch(q, tenant.slug, tenant.name)
          return html(
            <>
              <CreateTenantForm workspaceId={w.id} created={tenant} />
              <RowAdded list={tenantList(w)} found={found} request={request}>
                <TenantRow workspaceId={w.id} tenant={tenant} />
              </RowAdded>
            </>,
          )
        } catch (e) {
          // A slug the workspace has is a 409 at the slug field: shown there like a rule it breaks.
          if (!(e instanceof AppError) || e.code !== TenantErrors.SLUG_TAKEN.code) throw e
          const values = {
            name: sentText(body, 'name'),
            slug: sentText(body, 'slug'),
            metadata: sentText(body, 'metadata'),
          }
          const errors = { slug: `${e.message}.` }
          return html(<CreateTenantForm workspaceId={w.id} values={values} errors={errors} />, 409)
        }
      },
      { params, scope: 'workspace:write', ...views },
    )
    .get(
      '/app/workspaces/:workspace_id/tenants/:tenant_id',
      async ({ principal, scopes, workspace: w, params: p, query }) => {
        const tenant = await tenantService.get(w, 'all', p.tenant_id)
        const page = await members.list(w, 'all', tenant.id, { cursor: query.cursor })
        const path = `${tenantsPath(w.id)}/${tenant.id}`
        const write = holdsScope(scopes, 'workspace:write')
        return html(
          <Shell title={`${tenant.name} · ${w.name}`} user={shellUser(principal)} section="workspaces">
            <p class="hint">
              <a href={`/app/workspaces/${w.id}`} safe>
                {w.name}
              </a>{' '}
              / <a href={tenantsPath(w.id)}>Tenants</a> /
            </p>
            <h1 safe>{tenant.name}</h1>
            <div class="panel">
              <TenantFacts tenant={tenant} />
            </div>
            <div class="panel">
              <h2>Members</h2>
              <PagedList path={path} prefix="tenant-member" noun={MEMBERS} page={page} cursor={query.cursor}>
                <MemberTable path={path} members={page.items} write={write} />
              </PagedList>
              {write ? (
                <div id="tenant-member-add">
                  <AddMemberForm path={path} />
                </div>
              ) : (
                ''
              )}
            </div>
            {write ? (
              <div class="panel">
                <h2>Delete this tenant</h2>
                <p class="hint">Its memberships go with it. Users stay in the workspace.</p>
                <button
                  type="button"
                  class="btn danger"
                  hx-delete={path}
                  hx-confirm={`Delete the tenant ${tenant.name} (${tenant.slug})? Its memberships go with it.`}
                >
                  Delete tenant
                </button>
              </div>
            ) : (
              ''
            )}
          </Shell>,
        )
      },
      { params: tenantParams, query: t.Omit(listPageQuery, ['q']), scope: 'workspace:read', ...views },
    )
    .delete(
      '/app/workspaces/:workspace_id/tenants/:tenant_id',
      async ({ request, actor, workspace: w, params: p }) => {
        await tenantService.remove(w, actor, p.tenant_id)
        return navigate(request, tenantsPath(w.id))
      },
      { params: tenantParams, scope: 'workspace:write', ...views },
    )
    .post(
      '/app/workspaces/:workspace_id/tenants/:tenant_id/members',
      async ({ actor, workspace: w, params: p, body }) => {
        const path = `${tenantsPath(w.id)}/${p.tenant_id}`
        try {
          const sent = await memberForm.submit(body, async ({ user }) =>
            members.add(w, actor, 'all', p.tenant_id, await members.userIdOf(w, user)),
          )
          if (!sent.ok)
            return html(<AddMemberForm path={path} value={sent.values.user} error={sent.errors.user} />, 422)
          return html(
            <>
              <MemberAdded path={path} member={sent.result} />
              <CountAgain list={memberList(w, p.tenant_id)} />
            </>,
          )
        } catch (e) {
          const known = [
            TenantErrors.USER_NOT_FOUND,
            TenantErrors.USER_EMAIL_NOT_FOUND,
            TenantErrors.MEMBER_EXISTS,
          ]
          if (!(e instanceof AppError) || !known.some((k) => k.code === e.code)) throw e
          return html(
            <AddMemberForm path={path} value={sentText(body, 'user')} error={`${e.message}.`} />,
            e.status,
          )
        }
      },
      { params: tenantParams, scope: 'workspace:write', ...views },
    )
    .delete(
      '/app/workspaces/:workspace_id/tenants/:tenant_id/members/:user_id',
      async ({ actor, workspace: w, params: p }) =>
        removeRow(members.remove(w, actor, 'all', p.tenant_id, p.user_id), () => (
          <CountAgain list={memberList(w, p.tenant_id)} />
        )),
      { params: TenantModel.memberParams, scope: 'workspace:write', ...views },
    )
}
