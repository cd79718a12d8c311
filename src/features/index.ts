// The one list of features. app.ts mounts their routes and pages, the job registry runs their job
// kinds, purges and teardown steps, provisioning runs their steps, and the server hands the
// identity plane what they provide. A new feature is its folder and one line here.
import { feature as apps } from './apps'
import { feature as audit } from './audit'
import { feature as auth } from './auth'
import { feature as billing } from './billing'
import { feature as branding } from './branding'
import { feature as dashboard } from './dashboard'
import { feature as docs } from './docs'
import type { Feature, WorkspaceLifecycle } from './feature'
import { feature as health } from './health'
import { feature as idps } from './idps'
import { feature as loginPolicy } from './login-policy'
import { feature as machineKeys } from './machine-keys'
import { feature as mail } from './mail'
import { feature as smtp } from './smtp'
import { feature as tenants } from './tenants'
import { feature as trySignIn } from './try-sign-in'
import { feature as users } from './users'
import { feature as webhooks } from './webhooks'
import { feature as workspaces } from './workspaces'

/**
 * In dependency order: a feature comes after those it builds on. Provisioning runs in this order
 * and teardown in the reverse one, so the workspace's own rows and its identity instance go last.
 */
export const features: Feature[] = [
  health, // /healthz
  docs, // the API reference at /docs
  dashboard, // the dashboard's assets, and / leading to it
  smtp, // a workspace's own mail server, which the mail path sends through
  mail, // the one mail path and the development outbox
  auth, // signing in to the platform, and who is calling
  workspaces, // workspaces and their identity instances
  apps, // OIDC applications
  users, // a workspace's users and invitations
  loginPolicy, // how a workspace's users sign in
  idps, // external identity providers of a workspace
  branding, // a workspace's look on its hosted pages and mails
  machineKeys, // keys for agents and automation, and their token exchange
  audit, // reading a workspace's audit log (every feature writes it through core.audit)
  tenants, // a workspace's customers, their members and tenant-scoped access
  webhooks, // signed outgoing events to a workspace's endpoints
  billing, // plans, Stripe checkout and events, MAU metering and the spending cap
  trySignIn, // the dashboard signing in at a workspace's hosted pages, to show what apps receive
]

/** Every feature's provisioning steps (list order) and teardown steps (reverse order). */
export const workspaceLifecycle = (list: Feature[] = features): WorkspaceLifecycle => ({
  provision: list.flatMap((f) => f.provision ?? []),
  teardown: list.flatMap((f) => (f.teardown ? [f.teardown] : [])).reverse(),
})

export { entriesOf, type Feature, type FeatureContext } from './feature'
