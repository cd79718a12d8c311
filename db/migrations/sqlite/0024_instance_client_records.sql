-- A store that ran the reverted instance_clients build (8be0aae..ca84b7a, never released) has its
-- triggers and view: gone, so no write of apps keeps a copy nobody reads. (Its instance_secrets
-- column `clients` stays, unread: SQLite cannot drop a column only if it is there.)
DROP TRIGGER IF EXISTS `apps_instance_clients_insert`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `apps_instance_clients_update`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `apps_instance_clients_delete`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `instance_secrets_clients`;--> statement-breakpoint
DROP VIEW IF EXISTS `instance_client_records`;--> statement-breakpoint
DROP INDEX `apps_workspace_idx`;--> statement-breakpoint
CREATE INDEX `apps_workspace_idx` ON `apps` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
-- Each app as the identity plane's client record (identity/deps.ts ClientRecord): the one shape both
-- of the plane's reads of clients take, by id (the apps feature's ClientSource) and with a cold
-- instance's load (identity/keys.ts, its oldest few), computed when read. The JSON lists stay text
-- inside the record, parsed by the plane: a malformed one fails that client's reads only, never the
-- statement (nor does a value of another type: each is cast to text, and JSON holds no BLOB). A
-- migration that rebuilds apps (drizzle-kit does for most changes on SQLite) drops the view first
-- and makes it again.
CREATE VIEW `instance_client_records` AS SELECT `workspace_id` AS `instance_id`, `client_id`, `created_at`, `id`,
  json_object('clientId', CAST(`client_id` AS TEXT), 'name', CAST(`name` AS TEXT),
    'clientSecretHash', CAST(`client_secret_hash` AS TEXT), 'type', CAST(`app_type` AS TEXT),
    'redirectUris', CAST(`redirect_uris` AS TEXT), 'postLogoutRedirectUris', CAST(`post_logout_redirect_uris` AS TEXT),
    'extraGrants', CAST(`extra_grants` AS TEXT)) AS `record`
FROM `apps`;
