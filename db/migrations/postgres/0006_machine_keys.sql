CREATE TABLE "machine_key_assertions" (
	"key_id" text NOT NULL,
	"jti" text NOT NULL,
	"workspace_id" text NOT NULL,
	"expires_at" double precision NOT NULL,
	CONSTRAINT "machine_key_assertions_key_id_jti_pk" PRIMARY KEY("key_id","jti")
);
--> statement-breakpoint
CREATE TABLE "machine_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"scopes" text NOT NULL,
	"public_jwk" text NOT NULL,
	"expires_at" double precision,
	"created_at" double precision NOT NULL,
	"created_by" text NOT NULL,
	"last_used_at" double precision,
	"revokes_at" double precision,
	"replaced_by" text,
	"revoked_at" double precision,
	"revoked_reason" text
);
--> statement-breakpoint
CREATE INDEX "machine_key_assertions_expiry_idx" ON "machine_key_assertions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "machine_keys_workspace_idx" ON "machine_keys" USING btree ("workspace_id","created_at");