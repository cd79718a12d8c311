CREATE TABLE `tenant_members` (
	`tenant_id` text NOT NULL,
	`user_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `user_id`)
);
--> statement-breakpoint
CREATE INDEX `tenant_members_user_idx` ON `tenant_members` (`workspace_id`,`user_id`);--> statement-breakpoint
CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`metadata` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tenants_workspace_slug_idx` ON `tenants` (`workspace_id`,`slug`);--> statement-breakpoint
CREATE INDEX `tenants_workspace_idx` ON `tenants` (`workspace_id`,`id`);