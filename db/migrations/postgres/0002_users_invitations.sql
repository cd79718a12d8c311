ALTER TABLE "accounts" ADD COLUMN "status" text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "invited_at" double precision;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "last_sign_in_at" double precision;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "via_idp" text;--> statement-breakpoint
CREATE INDEX "accounts_instance_id_idx" ON "accounts" USING btree ("instance_id","id");