CREATE TABLE `webhook_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`delivery_id` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`ok` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_webhook_idx` ON `webhook_attempts` (`webhook_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `webhook_attempts_workspace_idx` ON `webhook_attempts` (`workspace_id`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`first_failed_at` integer,
	`last_attempt_at` integer,
	`next_attempt_at` integer,
	`claimed_by` text,
	`last_status_code` integer,
	`last_error` text,
	`last_response` text,
	`delivered_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_status_idx` ON `webhook_deliveries` (`webhook_id`,`status`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_workspace_idx` ON `webhook_deliveries` (`workspace_id`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`description` text,
	`enabled` integer NOT NULL,
	`secret_sealed` text NOT NULL,
	`previous_secret_sealed` text,
	`previous_secret_until` integer,
	`last_success_at` integer,
	`failing_since` integer,
	`paused_at` integer,
	`warned_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhooks_workspace_idx` ON `webhooks` (`workspace_id`,`created_at`);