CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"workspace_id" text NOT NULL,
	"tenant_id" text,
	"data" text NOT NULL,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "apps" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret_hash" text,
	"app_type" text NOT NULL,
	"redirect_uris" text NOT NULL,
	"post_logout_redirect_uris" text NOT NULL,
	"dev_mode" boolean DEFAULT false NOT NULL,
	"extra_grants" text DEFAULT '[]' NOT NULL,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "login_requests" (
	"state" text PRIMARY KEY NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier" text NOT NULL,
	"next" text,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"csrf_token" text NOT NULL,
	"id_token_sealed" text,
	"created_at" double precision NOT NULL,
	"expires_at" double precision NOT NULL,
	"last_seen_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dev_outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text,
	"to" text NOT NULL,
	"subject" text NOT NULL,
	"text" text NOT NULL,
	"html" text,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"owner_id" text NOT NULL,
	"state" text DEFAULT 'provisioning' NOT NULL,
	"plan" text DEFAULT 'free' NOT NULL,
	"provisioning_error" text,
	"provisioning_step" text,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "account_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"account_id" text NOT NULL,
	"purpose" text NOT NULL,
	"interaction_uid" text,
	"expires_at" double precision NOT NULL,
	"used_at" double precision
);
--> statement-breakpoint
CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"email" text NOT NULL,
	"email_verified" boolean DEFAULT false NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"password_hash" text,
	"is_platform_admin" boolean DEFAULT false NOT NULL,
	"auth_epoch" integer DEFAULT 0 NOT NULL,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "instance_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"alg" text NOT NULL,
	"public_jwk" text NOT NULL,
	"private_jwk_sealed" text NOT NULL,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "instance_secrets" (
	"instance_id" text PRIMARY KEY NOT NULL,
	"cookie_keys_sealed" text NOT NULL,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "login_throttle" (
	"key" text PRIMARY KEY NOT NULL,
	"failures" integer NOT NULL,
	"pending" integer DEFAULT 0 NOT NULL,
	"window_start" double precision NOT NULL,
	"locked_until" double precision
);
--> statement-breakpoint
CREATE TABLE "oidc_payloads" (
	"instance_id" text NOT NULL,
	"model" text NOT NULL,
	"id" text NOT NULL,
	"payload" text NOT NULL,
	"grant_id" text,
	"user_code" text,
	"uid" text,
	"account_id" text,
	"expires_at" double precision,
	"consumed_at" double precision,
	"polled_at" double precision,
	CONSTRAINT "oidc_payloads_instance_id_model_id_pk" PRIMARY KEY("instance_id","model","id")
);
--> statement-breakpoint
CREATE TABLE "upgrade_steps" (
	"name" text PRIMARY KEY NOT NULL,
	"done_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"payload" text NOT NULL,
	"workspace_id" text,
	"status" text DEFAULT 'queued' NOT NULL,
	"run_at" double precision NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer DEFAULT 10 NOT NULL,
	"lease_until" double precision,
	"locked_by" text,
	"last_error" text,
	"dedupe_key" text,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_tokens" ADD CONSTRAINT "account_tokens_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "events_workspace_idx" ON "events" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "apps_client_id_idx" ON "apps" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "apps_workspace_idx" ON "apps" USING btree ("workspace_id");--> statement-breakpoint
CREATE INDEX "sessions_account_idx" ON "sessions" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "dev_outbox_created_idx" ON "dev_outbox" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "workspaces_owner_idx" ON "workspaces" USING btree ("owner_id");--> statement-breakpoint
CREATE INDEX "account_tokens_account_idx" ON "account_tokens" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_instance_email_idx" ON "accounts" USING btree ("instance_id","email");--> statement-breakpoint
CREATE INDEX "instance_keys_instance_idx" ON "instance_keys" USING btree ("instance_id");--> statement-breakpoint
CREATE INDEX "oidc_payloads_grant_idx" ON "oidc_payloads" USING btree ("instance_id","grant_id");--> statement-breakpoint
CREATE INDEX "oidc_payloads_user_code_idx" ON "oidc_payloads" USING btree ("instance_id","user_code");--> statement-breakpoint
CREATE INDEX "oidc_payloads_uid_idx" ON "oidc_payloads" USING btree ("instance_id","uid");--> statement-breakpoint
CREATE INDEX "oidc_payloads_account_idx" ON "oidc_payloads" USING btree ("instance_id","account_id");--> statement-breakpoint
CREATE INDEX "oidc_payloads_expires_idx" ON "oidc_payloads" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "jobs_due_idx" ON "jobs" USING btree ("status","run_at");--> statement-breakpoint
CREATE INDEX "jobs_workspace_idx" ON "jobs" USING btree ("workspace_id");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_dedupe_key_idx" ON "jobs" USING btree ("dedupe_key");