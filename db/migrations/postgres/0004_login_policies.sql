CREATE TABLE "login_policies" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"allow_password" boolean NOT NULL,
	"allow_registration" boolean NOT NULL,
	"allow_external_idps" boolean NOT NULL,
	"require_email_verification" boolean NOT NULL,
	"mfa" text NOT NULL,
	"password_min_length" integer NOT NULL,
	"lockout_threshold" integer NOT NULL,
	"lockout_minutes" integer NOT NULL,
	"session_lifetime_hours" integer NOT NULL,
	"updated_at" double precision NOT NULL
);
--> statement-breakpoint
-- Workspaces that existed before login policies start with DESIGN's defaults (as provisioning gives new ones).
INSERT INTO "login_policies" ("workspace_id", "allow_password", "allow_registration", "allow_external_idps", "require_email_verification", "mfa", "password_min_length", "lockout_threshold", "lockout_minutes", "session_lifetime_hours", "updated_at")
SELECT "id", true, true, true, true, 'off', 8, 5, 15, 168, "updated_at" FROM "workspaces" WHERE "state" <> 'deleting';
