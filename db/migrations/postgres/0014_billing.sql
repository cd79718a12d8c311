CREATE TABLE "billing_accounts" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"customer_id" text,
	"subscription_id" text,
	"price_id" text,
	"status" text,
	"cancel_at_period_end" boolean DEFAULT false NOT NULL,
	"current_period_end" double precision,
	"subscription_order" text,
	"schedule_id" text,
	"scheduled_plan" text,
	"scheduled_at" double precision,
	"grace_until" double precision,
	"invoice_event_at" integer,
	"spending_cap_cents" integer,
	"cap_from_month" text,
	"previous_cap_cents" integer,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "billing_events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"received_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "billing_monthly_users" (
	"workspace_id" text NOT NULL,
	"month" text NOT NULL,
	"account_id" text NOT NULL,
	CONSTRAINT "billing_monthly_users_workspace_id_month_account_id_pk" PRIMARY KEY("workspace_id","month","account_id")
);
--> statement-breakpoint
CREATE TABLE "billing_usage" (
	"workspace_id" text NOT NULL,
	"month" text NOT NULL,
	"mau" integer NOT NULL,
	"warned_80" boolean DEFAULT false NOT NULL,
	"warned_95" boolean DEFAULT false NOT NULL,
	"warned_100" boolean DEFAULT false NOT NULL,
	"blocked_notified" boolean DEFAULT false NOT NULL,
	"reported_mau" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "billing_usage_workspace_id_month_pk" PRIMARY KEY("workspace_id","month")
);
--> statement-breakpoint
CREATE INDEX "billing_accounts_customer_idx" ON "billing_accounts" USING btree ("customer_id");--> statement-breakpoint
CREATE INDEX "billing_events_received_idx" ON "billing_events" USING btree ("received_at");