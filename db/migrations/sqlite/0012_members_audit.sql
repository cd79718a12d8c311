CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`at` integer NOT NULL,
	`actor` text NOT NULL,
	`action` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`ip` text,
	`user_agent` text,
	`changes` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_workspace_at_idx` ON `audit_log` (`workspace_id`,`at`,`id`);--> statement-breakpoint
CREATE TABLE `member_invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`token_hash` text NOT NULL,
	`invited_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `member_invitations_workspace_email_idx` ON `member_invitations` (`workspace_id`,`email`);--> statement-breakpoint
CREATE UNIQUE INDEX `member_invitations_token_idx` ON `member_invitations` (`token_hash`);--> statement-breakpoint
CREATE TABLE `workspace_members` (
	`workspace_id` text NOT NULL,
	`account_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `account_id`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `workspace_members_account_idx` ON `workspace_members` (`account_id`);--> statement-breakpoint
-- The owner of every workspace that existed before members becomes its first member, an owner.
INSERT INTO `workspace_members` (`workspace_id`, `account_id`, `role`, `created_at`, `updated_at`)
SELECT `id`, `owner_id`, 'owner', `created_at`, `updated_at` FROM `workspaces`;
