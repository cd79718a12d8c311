import type { FieldErrors, FormValues } from '../../shared/forms'
import { AppendedRow, FieldError, HxForm, RowsTable } from '../../shared/views/components'
import type { TenantModel } from './model'

type CreateField = keyof TenantModel.Create
const emptyCreate: FormValues<CreateField> = { slug: '', name: '', metadata: '' }

export const tenantsPath = (workspaceId: string) => `/app/workspaces/${workspaceId}/tenants`
const day = (iso: string) => iso.slice(0, 10)

export function TenantRow({ workspaceId, tenant }: { workspaceId: string; tenant: TenantModel.Out }) {
  return (
    <tr id={`tenant-${tenant.id}`}>
      <td>
        <a href={`${tenantsPath(workspaceId)}/${tenant.id}`} safe>
          {tenant.name}
        </a>
      </td>
      <td>
        <code safe>{tenant.slug}</code>
      </td>
      <td safe>{day(tenant.created_at)}</td>
    </tr>
  )
}

export function TenantTable({
  workspaceId,
  tenants,
  q,
}: {
  workspaceId: string
  tenants: TenantModel.Out[]
  q: string
}) {
  const empty = q ? `No tenant's slug or name starts with “${q}”.` : 'No tenants yet.'
  return (
    <RowsTable heads={['Name', 'Slug', 'Created']} rows="tenant-rows" empty={empty}>
      {tenants.map((tenant) => (
        <TenantRow workspaceId={workspaceId} tenant={tenant} />
      ))}
    </RowsTable>
  )
}

/** The create form; re-rendered with inline errors (422, 409) and the values kept, or emptied with a note. */
export function CreateTenantForm({
  workspaceId,
  values = emptyCreate,
  errors = {},
  created,
}: {
  workspaceId: string
  values?: FormValues<CreateField>
  errors?: FieldErrors<CreateField>
  created?: TenantModel.Out
}) {
  const action = tenantsPath(workspaceId)
  return (
    <HxForm
      id="tenant-form"
      action={action}
      target="#tenant-create"
      invalid={Object.keys(errors).length > 0}
      done={created && `Tenant ${created.name} created.`}
    >
      <label for="tenant-name">Name</label>
      <input
        id="tenant-name"
        name="name"
        required
        maxlength="200"
        value={values.name}
        placeholder="Acme Inc."
      />
      <FieldError id="tenant-name-error" message={errors.name} />
      <label for="tenant-slug">Slug (lower-case letters, digits and hyphens; it never changes)</label>
      <input id="tenant-slug" name="slug" required maxlength="63" value={values.slug} placeholder="acme" />
      <FieldError id="tenant-slug-error" message={errors.slug} />
      <label for="tenant-metadata">Metadata (a JSON object, optional)</label>
      <textarea id="tenant-metadata" name="metadata" rows="3" placeholder='{"plan": "gold"}' safe>
        {values.metadata}
      </textarea>
      <FieldError id="tenant-metadata-error" message={errors.metadata} />
      <p>
        <button class="btn" type="submit">
          Create tenant
        </button>
      </p>
    </HxForm>
  )
}

/** What the tenant page shows of the tenant itself. */
export function TenantFacts({ tenant }: { tenant: TenantModel.Out }) {
  const metadata = Object.keys(tenant.metadata).length ? JSON.stringify(tenant.metadata, null, 2) : ''
  return (
    <dl class="facts">
      <dt>Slug</dt>
      <dd>
        <code safe>{tenant.slug}</code>
      </dd>
      <dt>Id</dt>
      <dd>
        <code safe>{tenant.id}</code>
      </dd>
      <dt>Created</dt>
      <dd safe>{day(tenant.created_at)}</dd>
      <dt>Metadata</dt>
      <dd>{metadata ? <pre safe>{metadata}</pre> : <span class="hint">none</span>}</dd>
    </dl>
  )
}

export function MemberRow({
  path,
  member,
  write,
}: {
  /** The tenant's page. */
  path: string
  member: TenantModel.Member
  write: boolean
}) {
  const who = member.name || member.email || member.user_id
  return (
    <tr id={`tenant-member-${member.user_id}`}>
      <td safe>{member.email}</td>
      <td safe>{member.name}</td>
      <td>
        <code class="hint" safe>
          {member.user_id}
        </code>
      </td>
      <td safe>{day(member.added_at)}</td>
      <td class="actions">
        {write ? (
          <button
            type="button"
            class="btn danger small"
            hx-delete={`${path}/members/${member.user_id}`}
            hx-target="closest tr"
            hx-swap="outerHTML swap:200ms"
            hx-confirm={`Remove ${who} from this tenant?`}
            aria-label={`Remove ${who}`}
          >
            Remove
          </button>
        ) : (
          ''
        )}
      </td>
    </tr>
  )
}

export function MemberTable({
  path,
  members,
  write,
}: {
  path: string
  members: TenantModel.Member[]
  write: boolean
}) {
  return (
    <RowsTable
      heads={['Email', 'Name', 'User id', 'Added', '']}
      rows="tenant-member-rows"
      empty="No members yet."
    >
      {members.map((member) => (
        <MemberRow path={path} member={member} write={write} />
      ))}
    </RowsTable>
  )
}

/** Adds a user of the workspace, named by email or by id. */
export function AddMemberForm({
  path,
  value = '',
  error,
  added,
}: {
  path: string
  value?: string
  error?: string
  added?: TenantModel.Member
}) {
  return (
    <HxForm
      id="tenant-member-form"
      action={`${path}/members`}
      target="#tenant-member-add"
      invalid={false}
      done={added && `${added.email || added.user_id} is now a member.`}
    >
      <label for="tenant-member-user">Email or user id</label>
      <input
        id="tenant-member-user"
        name="user"
        required
        maxlength="320"
        value={value}
        placeholder="ada@example.com or usr_…"
      />
      <FieldError id="tenant-member-user-error" message={error} />
      <p>
        <button class="btn" type="submit">
          Add member
        </button>
      </p>
    </HxForm>
  )
}

/** After adding: the emptied form with a note, and the new row joining the table. */
export function MemberAdded({ path, member }: { path: string; member: TenantModel.Member }) {
  return (
    <>
      <AddMemberForm path={path} added={member} />
      <AppendedRow rows="tenant-member-rows">
        <MemberRow path={path} member={member} write={true} />
      </AppendedRow>
    </>
  )
}
