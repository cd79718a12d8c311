CREATE TABLE `machine_key_assertions` (
	`key_id` text NOT NULL,
	`jti` text NOT NULL,
	`workspace_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`key_id`, `jti`)
);
--> statement-breakpoint
CREATE INDEX `machine_key_assertions_expiry_idx` ON `machine_key_assertions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `machine_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`scopes` text NOT NULL,
	`public_jwk` text NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`created_by` text NOT NULL,
	`last_used_at` integer,
	`revokes_at` integer,
	`replaced_by` text,
	`revoked_at` integer,
	`revoked_reason` text
);
--> statement-breakpoint
CREATE INDEX `machine_keys_workspace_idx` ON `machine_keys` (`workspace_id`,`created_at`);