-- A rotated web app's previous secret (SHA-256) and until when it is still accepted (a grace the
-- rotation asked for); the client record carries both, so every node's secret check sees them.
ALTER TABLE `apps` ADD `previous_secret_hash` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `previous_secret_expires_at` integer;--> statement-breakpoint
DROP VIEW IF EXISTS `instance_client_records`;--> statement-breakpoint
CREATE VIEW `instance_client_records` AS SELECT `workspace_id` AS `instance_id`, `client_id`, `created_at`, `id`,
  json_object('clientId', CAST(`client_id` AS TEXT), 'name', CAST(`name` AS TEXT),
    'clientSecretHash', CAST(`client_secret_hash` AS TEXT),
    'previousSecretHash', CAST(`previous_secret_hash` AS TEXT),
    'previousSecretExpiresAt', CAST(`previous_secret_expires_at` AS INTEGER), 'type', CAST(`app_type` AS TEXT),
    'redirectUris', CAST(`redirect_uris` AS TEXT), 'postLogoutRedirectUris', CAST(`post_logout_redirect_uris` AS TEXT),
    'extraGrants', CAST(`extra_grants` AS TEXT)) AS `record`
FROM `apps`;
