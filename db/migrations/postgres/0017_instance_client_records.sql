-- A store that ran the reverted instance_clients build (8be0aae..ca84b7a, never released) has its
-- column, functions and triggers: gone, so no write of apps keeps a copy nobody reads.
DROP TRIGGER IF EXISTS "apps_instance_clients" ON "apps";--> statement-breakpoint
DROP TRIGGER IF EXISTS "instance_secrets_clients" ON "instance_secrets";--> statement-breakpoint
DROP FUNCTION IF EXISTS "apps_instance_clients"();--> statement-breakpoint
DROP FUNCTION IF EXISTS "instance_secrets_clients"();--> statement-breakpoint
DROP FUNCTION IF EXISTS "instance_clients_of"(text);--> statement-breakpoint
ALTER TABLE "instance_secrets" DROP COLUMN IF EXISTS "clients";--> statement-breakpoint
DROP VIEW IF EXISTS "instance_client_records";--> statement-breakpoint
-- A workspace's apps in creation order. Built beside the old index and swapped in (CREATE INDEX
-- blocks writes of apps, not the nodes' reads of their clients; the swap is a moment).
CREATE INDEX "apps_workspace_created_idx" ON "apps" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
DROP INDEX "apps_workspace_idx";--> statement-breakpoint
ALTER INDEX "apps_workspace_created_idx" RENAME TO "apps_workspace_idx";--> statement-breakpoint
-- Each app as the identity plane's client record (identity/deps.ts ClientRecord): the one shape both
-- of the plane's reads of clients take, by id (the apps feature's ClientSource) and with a cold
-- instance's load (identity/keys.ts, its oldest few), computed when read. The JSON lists stay text
-- inside the record, parsed by the plane: a malformed one fails that client's reads only, never the
-- statement. A migration that changes these columns of apps drops the view first and makes it again.
CREATE VIEW "instance_client_records" AS SELECT "workspace_id" AS "instance_id", "client_id", "created_at", "id",
  json_build_object('clientId', "client_id", 'name', "name", 'clientSecretHash', "client_secret_hash",
    'type', "app_type", 'redirectUris', "redirect_uris", 'postLogoutRedirectUris', "post_logout_redirect_uris",
    'extraGrants', "extra_grants") AS "record"
FROM "apps";
