-- A rotated web app's previous secret (SHA-256) and until when it is still accepted (a grace the
-- rotation asked for); the client record carries both, so every node's secret check sees them.
ALTER TABLE "apps" ADD COLUMN "previous_secret_hash" text;--> statement-breakpoint
ALTER TABLE "apps" ADD COLUMN "previous_secret_expires_at" double precision;--> statement-breakpoint
DROP VIEW IF EXISTS "instance_client_records";--> statement-breakpoint
CREATE VIEW "instance_client_records" AS SELECT "workspace_id" AS "instance_id", "client_id", "created_at", "id",
  json_build_object('clientId', "client_id", 'name', "name", 'clientSecretHash', "client_secret_hash",
    'previousSecretHash', "previous_secret_hash", 'previousSecretExpiresAt', "previous_secret_expires_at",
    'type', "app_type", 'redirectUris', "redirect_uris", 'postLogoutRedirectUris', "post_logout_redirect_uris",
    'extraGrants', "extra_grants") AS "record"
FROM "apps";
