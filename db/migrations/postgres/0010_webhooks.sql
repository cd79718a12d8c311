CREATE TABLE "webhook_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"delivery_id" text NOT NULL,
	"started_at" double precision NOT NULL,
	"finished_at" double precision,
	"ok" boolean
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"first_failed_at" double precision,
	"last_attempt_at" double precision,
	"next_attempt_at" double precision,
	"claimed_by" text,
	"last_status_code" integer,
	"last_error" text,
	"last_response" text,
	"delivered_at" double precision,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"url" text NOT NULL,
	"events" text NOT NULL,
	"description" text,
	"enabled" boolean NOT NULL,
	"secret_sealed" text NOT NULL,
	"previous_secret_sealed" text,
	"previous_secret_until" double precision,
	"last_success_at" double precision,
	"failing_since" double precision,
	"paused_at" double precision,
	"warned_at" double precision,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_attempts_webhook_idx" ON "webhook_attempts" USING btree ("webhook_id","started_at");--> statement-breakpoint
CREATE INDEX "webhook_attempts_workspace_idx" ON "webhook_attempts" USING btree ("workspace_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_idx" ON "webhook_deliveries" USING btree ("webhook_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_status_idx" ON "webhook_deliveries" USING btree ("webhook_id","status");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_workspace_idx" ON "webhook_deliveries" USING btree ("workspace_id");--> statement-breakpoint
CREATE INDEX "webhooks_workspace_idx" ON "webhooks" USING btree ("workspace_id","created_at");