import { NO_STORE, type SidebarLink, WorkspacePage } from './components'
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
