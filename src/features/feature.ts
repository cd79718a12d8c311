import type { AnyElysia } from 'elysia'
import type { AccessFinder, AuthPlugin, PrincipalResolver } from '../access/guard'
import type { Core } from '../core'
import type { NodeLock } from '../db/serve-lock'
import type { IdentityExtension, IdentityPlane } from '../identity'
import type { Purge } from '../jobs/purge-expired'
import type { JobHandler } from '../jobs/runner'
import type { BodyLimit } from '../shared/plugins/body-limit'
import type { Workspace } from './workspaces/service'

/**
 * What one feature folder lends the product, exported once as `feature` from its `index.ts` and
 * listed in `features/index.ts`: app.ts mounts the routes and pages, the job registry runs the job
 * kinds, purges and teardown, provisioning runs the steps, and the server hands the identity plane
 * what it provides. Plain data and functions; every part is optional.
 */
export interface Feature {
  /** The folder's name; also what a failing step is logged under. */
  name: string
  /** JSON routes (`/v1/…`): an Elysia plugin. */
  routes?(ctx: FeatureContext): AnyElysia
  /** Dashboard pages (`/app/…`) and other browser routes: an Elysia plugin. */
  pages?(ctx: FeatureContext): AnyElysia
  /** Routes whose bodies may pass the control plane's 1 MiB (uploads), each with its own cap. */
  bodyLimits?: BodyLimit[]
  /** Where the dashboard links to this feature's pages of a workspace. */
  nav?: NavEntry[]
  /** Run in list order when a workspace is provisioned; each is idempotent. */
  provision?: ProvisionStep[]
  /** Removes this feature's rows of a workspace being deleted; idempotent. */
  teardown?: TeardownStep
  /** Deletes this feature's rows nothing can use any more (the periodic purge). */
  purges?: Purge[]
  /** Its job kinds; the workspace lifecycle is handed in for the kinds that run it. */
  jobs?(lifecycle: WorkspaceLifecycle): JobHandler<Core, never>[]
  /** What this feature lends the identity engine: its extension points and sources (composeExtensions). */
  identity?(core: Core): IdentityExtension
  /** Who is calling: resolvers asked in list order by the one auth guard. */
  principals?(core: Core): PrincipalResolver[]
  /** The workspace a path's `{workspace_id}` names and what a caller holds there; one feature provides it. */
  workspaceAccess?(core: Core): AccessFinder<Workspace>
}

/** What routes and pages are built with. */
export interface FeatureContext {
  core: Core
  /** The one auth guard (`auth: true`, `scope: 'workspace:read'`). */
  auth: AuthPlugin<Workspace>
  identity: IdentityPlane
  /** Every feature's navigation entries, in list order (the settings index draws its lines). */
  nav: NavEntry[]
  /** The workspace sidebar every workspace page draws: the `sidebar` entries by their `order`. */
  sidebar: NavEntry[]
  /** This node's lock on its node id (`serve` only), for /healthz. */
  nodeLock?: Pick<NodeLock, 'state'>
}

export interface NavEntry {
  label: string
  /**
   * The page's path below `/app/workspaces/{id}/`, e.g. `apps` or `settings/login-policy` (`` is
   * the overview); one starting with `/` is a page outside the workspace (`/docs`).
   */
  path: string
  /** `sidebar`: an entry of the sidebar on every workspace page; `settings`: a line on its settings page. */
  place: 'sidebar' | 'settings'
  /** Where the entry stands in its place (ascending): features are listed by dependency, not by menu. */
  order?: number
}

/** The entries of one place, by their order (stable, so ties keep list order). */
export const entriesOf = (nav: NavEntry[], place: NavEntry['place']): NavEntry[] =>
  nav.filter((e) => e.place === place).sort((a, b) => (a.order ?? 0) - (b.order ?? 0))

export interface ProvisionStep {
  /** Recorded after the step ran, so a retried provisioning resumes after it. Unique. */
  name: string
  /** Completes "Could not …" in the message a user sees when the step keeps failing. */
  does: string
  run(core: Core, workspace: Workspace): Promise<void> | void
}

/** Removes one owner's rows of a workspace being deleted. Idempotent. */
export type TeardownStep = (core: Core, workspaceId: string) => Promise<void>

/** Every feature's provisioning steps and teardown steps, in list order. */
export interface WorkspaceLifecycle {
  provision: ProvisionStep[]
  teardown: TeardownStep[]
}
