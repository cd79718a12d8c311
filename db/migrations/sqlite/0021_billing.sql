CREATE TABLE `billing_accounts` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`customer_id` text,
	`subscription_id` text,
	`price_id` text,
	`status` text,
	`cancel_at_period_end` integer DEFAULT false NOT NULL,
	`current_period_end` integer,
	`subscription_order` text,
	`schedule_id` text,
	`scheduled_plan` text,
	`scheduled_at` integer,
	`grace_until` integer,
	`invoice_event_at` integer,
	`spending_cap_cents` integer,
	`cap_from_month` text,
	`previous_cap_cents` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `billing_accounts_customer_idx` ON `billing_accounts` (`customer_id`);--> statement-breakpoint
CREATE TABLE `billing_events` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `billing_events_received_idx` ON `billing_events` (`received_at`);--> statement-breakpoint
CREATE TABLE `billing_monthly_users` (
	`workspace_id` text NOT NULL,
	`month` text NOT NULL,
	`account_id` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `month`, `account_id`)
);
--> statement-breakpoint
CREATE TABLE `billing_usage` (
	`workspace_id` text NOT NULL,
	`month` text NOT NULL,
	`mau` integer NOT NULL,
	`warned_80` integer DEFAULT false NOT NULL,
	`warned_95` integer DEFAULT false NOT NULL,
	`warned_100` integer DEFAULT false NOT NULL,
	`blocked_notified` integer DEFAULT false NOT NULL,
	`reported_mau` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `month`)
);
