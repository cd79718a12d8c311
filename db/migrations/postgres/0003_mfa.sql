CREATE TABLE "account_passkeys" (
	"credential_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"instance_id" text NOT NULL,
	"public_key" text NOT NULL,
	"counter" double precision NOT NULL,
	"transports" text NOT NULL,
	"device_type" text NOT NULL,
	"backed_up" boolean NOT NULL,
	"created_at" double precision NOT NULL,
	"last_used_at" double precision
);
--> statement-breakpoint
CREATE TABLE "account_recovery_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"instance_id" text NOT NULL,
	"used_at" double precision,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "account_totp" (
	"account_id" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"secret_sealed" text NOT NULL,
	"confirmed_at" double precision,
	"last_used_step" double precision,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webauthn_challenges" (
	"challenge" text PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"account_id" text,
	"purpose" text NOT NULL,
	"expires_at" double precision NOT NULL
);
--> statement-breakpoint
ALTER TABLE "account_passkeys" ADD CONSTRAINT "account_passkeys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_recovery_codes" ADD CONSTRAINT "account_recovery_codes_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_totp" ADD CONSTRAINT "account_totp_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webauthn_challenges" ADD CONSTRAINT "webauthn_challenges_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_passkeys_account_idx" ON "account_passkeys" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "account_recovery_codes_account_idx" ON "account_recovery_codes" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "webauthn_challenges_expires_idx" ON "webauthn_challenges" USING btree ("expires_at");