CREATE TABLE "webhook_rate" (
	"webhook_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"second" integer NOT NULL,
	"attempts" integer NOT NULL,
	CONSTRAINT "webhook_rate_webhook_id_second_pk" PRIMARY KEY("webhook_id","second")
);
--> statement-breakpoint
CREATE INDEX "webhook_rate_workspace_idx" ON "webhook_rate" USING btree ("workspace_id");--> statement-breakpoint
CREATE INDEX "webhook_attempts_in_flight_idx" ON "webhook_attempts" USING btree ("webhook_id","finished_at","started_at");