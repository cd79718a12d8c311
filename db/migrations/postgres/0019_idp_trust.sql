ALTER TABLE "idps" ADD COLUMN "trust_email" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "idps" ADD COLUMN "trust_mfa" boolean DEFAULT false NOT NULL;