CREATE TABLE "idps" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"type" text NOT NULL,
	"name" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret_sealed" text NOT NULL,
	"issuer" text,
	"scopes" text NOT NULL,
	"active" boolean NOT NULL,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE INDEX "idps_workspace_idx" ON "idps" USING btree ("workspace_id","created_at");