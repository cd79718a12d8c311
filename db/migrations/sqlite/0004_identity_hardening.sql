CREATE TABLE `upgrade_steps` (
	`name` text PRIMARY KEY NOT NULL,
	`done_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `accounts` ADD `auth_epoch` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `oidc_payloads` ADD `account_id` text;--> statement-breakpoint
ALTER TABLE `oidc_payloads` ADD `polled_at` integer;--> statement-breakpoint
CREATE INDEX `oidc_payloads_account_idx` ON `oidc_payloads` (`instance_id`,`account_id`);--> statement-breakpoint
ALTER TABLE `jobs` ADD `dedupe_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_dedupe_key_idx` ON `jobs` (`dedupe_key`);