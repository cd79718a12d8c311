CREATE TABLE `tenant_invitations` (
	`tenant_id` text NOT NULL,
	`email` text NOT NULL,
	`workspace_id` text NOT NULL,
	`invited_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `email`)
);
--> statement-breakpoint
CREATE INDEX `tenant_invitations_email_idx` ON `tenant_invitations` (`workspace_id`,`email`);--> statement-breakpoint
CREATE INDEX `tenant_invitations_expiry_idx` ON `tenant_invitations` (`expires_at`);