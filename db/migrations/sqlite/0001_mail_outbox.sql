CREATE TABLE `dev_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text,
	`to` text NOT NULL,
	`subject` text NOT NULL,
	`text` text NOT NULL,
	`html` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `dev_outbox_created_idx` ON `dev_outbox` (`created_at`);