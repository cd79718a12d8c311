CREATE TABLE `smtp_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`host` text NOT NULL,
	`port` integer NOT NULL,
	`username` text,
	`password_sealed` text,
	`security` text NOT NULL,
	`from_address` text NOT NULL,
	`from_name` text,
	`active` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_success_at` integer,
	`last_error_at` integer,
	`last_error` text
);
--> statement-breakpoint
CREATE INDEX `smtp_providers_workspace_idx` ON `smtp_providers` (`workspace_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `smtp_providers_active_idx` ON `smtp_providers` (`workspace_id`) WHERE "smtp_providers"."active";