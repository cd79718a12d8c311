import { eq, sql } from 'drizzle-orm'
import type { Actor } from '../../access/model'
import { type FieldChanges, fieldChanges } from '../../audit/record'
import type { Core } from '../../core'
import { preparedRead } from '../../db/prepared'
import type { Conn } from '../../db/store'
import { type BrandingLogo, brandingLogoUrl, type InstanceBranding } from '../../identity'
import { displayName } from '../../shared/display-names'
import { appError } from '../../shared/errors'
import type { Workspace } from '../workspaces/service'
import { BrandingErrors } from './errors'
import { checkLogo } from './logo-file'
import type { BrandingModel } from './model'
import { brandingLogos, brandings } from './schema'

type Row = typeof brandings.$inferSelect
type Settings = Omit<BrandingModel.View, 'logo_url'>
const FIELDS = [
  'display_name',
  'primary_color',
  'background_color',
  'text_color',
  'privacy_policy_url',
  'terms_url',
] as const satisfies readonly (keyof Settings)[]

const NONE: Settings = {
  display_name: null,
  primary_color: null,
  background_color: null,
  text_color: null,
  privacy_policy_url: null,
  terms_url: null,
}

const settingsOf = (row: Row | undefined): Settings =>
  row
    ? {
        display_name: row.displayName,
        primary_color: row.primaryColor,
        background_color: row.backgroundColor,
        text_color: row.textColor,
        privacy_policy_url: row.privacyPolicyUrl,
        terms_url: row.termsUrl,
      }
    : { ...NONE }

/**
 * A privacy or terms link as stored: https, with a host and no credentials, checked on the URL as
 * parsed (what browsers follow), and stored as parsed. A 422 at its field otherwise.
 */
function checkedUrl(raw: string, field: string): string {
  const refuse = (message: string) =>
    appError(BrandingErrors.URL_REFUSED, 422, { loc: ['body', field], message })
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw refuse('Enter a full URL, starting with https://')
  }
  if (url.protocol !== 'https:') throw refuse('Use an https URL')
  if (!url.hostname) throw refuse('Enter a URL with a host name')
  if (url.username || url.password) throw refuse('Remove the user name and password from the URL')
  if (url.href.length > 2000) throw refuse('Use at most 2000 characters')
  return url.href
}

/** The input's fields as they will be stored; omitted fields absent, null kept (back to the platform's). */
function normalised(input: BrandingModel.Update): Partial<Settings> {
  const out: Partial<Settings> = {}
  if (input.display_name !== undefined)
    out.display_name =
      input.display_name === null ? null : displayName(input.display_name, ['body', 'display_name'])
  for (const field of ['primary_color', 'background_color', 'text_color'] as const)
    if (input[field] !== undefined) out[field] = input[field]?.toLowerCase() ?? null
  for (const field of ['privacy_policy_url', 'terms_url'] as const) {
    const value = input[field]
    if (value !== undefined) out[field] = value === null ? null : checkedUrl(value, field)
  }
  return out
}

// Both read by every instance a node loads (prepared.ts).
const logoVersionRow = preparedRead((db) =>
  db
    .select({ version: brandingLogos.version })
    .from(brandingLogos)
    .where(eq(brandingLogos.workspaceId, sql.placeholder('workspaceId')))
    .prepare('branding_logo_version_of'),
)
const brandingRow = preparedRead((db) =>
  db
    .select()
    .from(brandings)
    .where(eq(brandings.workspaceId, sql.placeholder('workspaceId')))
    .prepare('branding_of'),
)

const logoVersion = async (core: Core, workspaceId: string) => {
  const [logo] = await logoVersionRow(core.db).execute({ workspaceId })
  return logo?.version ?? null
}

const readBranding = async (core: Core, workspaceId: string) => {
  const [[row], version] = await Promise.all([
    brandingRow(core.db).execute({ workspaceId }),
    logoVersion(core, workspaceId),
  ])
  return { settings: settingsOf(row), row, logoVersion: version }
}

function viewOf(
  core: Core,
  workspaceId: string,
  settings: Settings,
  version: string | null,
): BrandingModel.View {
  return { ...settings, logo_url: version ? brandingLogoUrl(core.config, workspaceId, version) : null }
}

/**
 * A workspace's branding (DESIGN "Branding", SPEC "SMTP and branding"): reading takes
 * `workspace:read`, every change `workspace:write` (the guard's), is audited, and is on every
 * node's hosted pages as soon as it is committed (`core.instances.changed`).
 */
export function createBrandingService(core: Core) {
  /** One audit entry on the workspace's branding, in the change's transaction. */
  const audited = (tx: Conn, workspaceId: string, by: Actor, action: string, changes: FieldChanges) =>
    core.audit(
      { workspaceId, actor: by, action, target: { type: 'branding', id: workspaceId }, changes },
      { tx },
    )
  const writable = (workspace: Workspace) => {
    if (workspace.state === 'deleting') throw appError(BrandingErrors.WORKSPACE_DELETING, 409)
  }
  const view = async (workspaceId: string) => {
    const { settings, logoVersion } = await readBranding(core, workspaceId)
    return viewOf(core, workspaceId, settings, logoVersion)
  }

  return {
    get: (workspace: Workspace) => view(workspace.id),

    /** Omitted fields keep their value; null puts the platform's back. */
    async update(workspace: Workspace, by: Actor, input: BrandingModel.Update) {
      writable(workspace)
      const changes = normalised(input)
      const now = core.clock.now()
      await core.store.tx(async (tx) => {
        await tx.serialize(`branding:${workspace.id}`)
        const [row] = await tx.db.select().from(brandings).where(eq(brandings.workspaceId, workspace.id))
        const before = settingsOf(row)
        const after = { ...before, ...changes }
        const diff = fieldChanges<Settings>(before, after, FIELDS)
        if (!Object.keys(diff).length) return
        const values = {
          displayName: after.display_name,
          primaryColor: after.primary_color,
          backgroundColor: after.background_color,
          textColor: after.text_color,
          privacyPolicyUrl: after.privacy_policy_url,
          termsUrl: after.terms_url,
          updatedAt: now,
        }
        await tx.db
          .insert(brandings)
          .values({ workspaceId: workspace.id, ...values })
          .onConflictDoUpdate({ target: brandings.workspaceId, set: values })
        await audited(tx, workspace.id, by, 'branding.updated', diff)
      })
      // Every node's hosted pages show it at once.
      await core.instances.changed(workspace.id)
      return view(workspace.id)
    },

    /** Replaces the logo with an upload that passes `checkLogo` (a 422 at `logo` otherwise). */
    async uploadLogo(workspace: Workspace, by: Actor, upload: Uint8Array) {
      writable(workspace)
      const logo = checkLogo(upload)
      const now = core.clock.now()
      await core.store.tx(async (tx) => {
        const values = {
          contentType: logo.contentType,
          dataBase64: Buffer.from(logo.bytes).toString('base64'),
          version: logo.version,
          size: logo.bytes.byteLength,
          createdAt: now,
        }
        const [before] = await tx.db
          .select({ version: brandingLogos.version })
          .from(brandingLogos)
          .where(eq(brandingLogos.workspaceId, workspace.id))
        await tx.db
          .insert(brandingLogos)
          .values({ workspaceId: workspace.id, ...values })
          .onConflictDoUpdate({ target: brandingLogos.workspaceId, set: values })
        await audited(tx, workspace.id, by, 'branding.logo_uploaded', {
          logo: { from: before?.version ?? null, to: logo.version },
          type: { to: logo.contentType },
          size: { to: logo.bytes.byteLength },
        })
      })
      await core.instances.changed(workspace.id)
      return view(workspace.id)
    },

    /** Back to no logo; 200 also when there was none (nothing is audited then). */
    async removeLogo(workspace: Workspace, by: Actor) {
      writable(workspace)
      const removed = await core.store.tx(async (tx) => {
        const [gone] = await tx.db
          .delete(brandingLogos)
          .where(eq(brandingLogos.workspaceId, workspace.id))
          .returning({ version: brandingLogos.version })
        if (!gone) return false
        await audited(tx, workspace.id, by, 'branding.logo_removed', {
          logo: { from: gone.version, to: null },
        })
        return true
      })
      if (removed) await core.instances.changed(workspace.id)
      return view(workspace.id)
    },
  }
}

/** The branding's teardown step of a workspace deletion. */
export async function deleteWorkspaceBranding(core: Core, workspaceId: string): Promise<void> {
  await core.db.delete(brandingLogos).where(eq(brandingLogos.workspaceId, workspaceId))
  await core.db.delete(brandings).where(eq(brandings.workspaceId, workspaceId))
}

/** The identity plane's `branding`: the settings and the logo's version, not its bytes. */
export const instanceBrandingOf =
  (core: Core) =>
  async (workspaceId: string): Promise<InstanceBranding | null> => {
    const { row, logoVersion } = await readBranding(core, workspaceId)
    if (!row && !logoVersion) return null
    const s = settingsOf(row)
    return {
      displayName: s.display_name,
      primaryColor: s.primary_color,
      backgroundColor: s.background_color,
      textColor: s.text_color,
      privacyPolicyUrl: s.privacy_policy_url,
      termsUrl: s.terms_url,
      logo: logoVersion ? { version: logoVersion } : null,
    }
  }

/** The identity plane's `brandingLogo`: the bytes as stored. */
export const brandingLogoOf =
  (core: Core) =>
  async (workspaceId: string): Promise<BrandingLogo | null> => {
    const [logo] = await core.db
      .select()
      .from(brandingLogos)
      .where(eq(brandingLogos.workspaceId, workspaceId))
    if (!logo) return null
    return {
      contentType: logo.contentType,
      bytes: new Uint8Array(Buffer.from(logo.dataBase64, 'base64')),
      version: logo.version,
    }
  }

/**
 * A workspace's branding for its mails (the mail feature renders them): the same fields as the
 * API's view, the logo by its public URL on the instance. Nulls where nothing is set.
 */
export async function brandingForMail(core: Core, workspaceId: string): Promise<BrandingModel.View> {
  const { settings, logoVersion } = await readBranding(core, workspaceId)
  return viewOf(core, workspaceId, settings, logoVersion)
}
