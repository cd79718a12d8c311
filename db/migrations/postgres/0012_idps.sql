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
CREATE TABLE "account_links" (
	"instance_id" text NOT NULL,
	"idp_id" text NOT NULL,
	"subject" text NOT NULL,
	"account_id" text NOT NULL,
	"created_at" double precision NOT NULL,
	CONSTRAINT "account_links_instance_id_idp_id_subject_pk" PRIMARY KEY("instance_id","idp_id","subject")
);
--> statement-breakpoint
ALTER TABLE "account_links" ADD CONSTRAINT "account_links_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idps_workspace_idx" ON "idps" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "account_links_account_idx" ON "account_links" USING btree ("account_id");