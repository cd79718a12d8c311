ALTER TABLE `accounts` ADD `status` text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `invited_at` integer;--> statement-breakpoint
ALTER TABLE `accounts` ADD `last_sign_in_at` integer;--> statement-breakpoint
ALTER TABLE `accounts` ADD `via_idp` text;--> statement-breakpoint
CREATE INDEX `accounts_instance_id_idx` ON `accounts` (`instance_id`,`id`);