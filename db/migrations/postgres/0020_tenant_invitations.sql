CREATE TABLE "tenant_invitations" (
	"tenant_id" text NOT NULL,
	"email" text NOT NULL,
	"workspace_id" text NOT NULL,
	"invited_by" text NOT NULL,
	"created_at" double precision NOT NULL,
	"expires_at" double precision NOT NULL,
	CONSTRAINT "tenant_invitations_tenant_id_email_pk" PRIMARY KEY("tenant_id","email")
);
--> statement-breakpoint
CREATE INDEX "tenant_invitations_email_idx" ON "tenant_invitations" USING btree ("workspace_id","email");--> statement-breakpoint
CREATE INDEX "tenant_invitations_expiry_idx" ON "tenant_invitations" USING btree ("expires_at");