CREATE TABLE `account_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`account_id` text NOT NULL,
	`purpose` text NOT NULL,
	`interaction_uid` text,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `account_tokens_account_idx` ON `account_tokens` (`account_id`);--> statement-breakpoint
CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`email` text NOT NULL,
	`email_verified` integer DEFAULT false NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`password_hash` text,
	`is_platform_admin` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_instance_email_idx` ON `accounts` (`instance_id`,`email`);--> statement-breakpoint
CREATE TABLE `apps` (
	`id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`name` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_hash` text,
	`app_type` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`post_logout_redirect_uris` text NOT NULL,
	`dev_mode` integer DEFAULT false NOT NULL,
	`extra_grants` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_client_id_idx` ON `apps` (`client_id`);--> statement-breakpoint
CREATE INDEX `apps_instance_idx` ON `apps` (`instance_id`);--> statement-breakpoint
CREATE TABLE `instance_keys` (
	`kid` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`alg` text NOT NULL,
	`public_jwk` text NOT NULL,
	`private_jwk_sealed` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `instance_keys_instance_idx` ON `instance_keys` (`instance_id`);--> statement-breakpoint
CREATE TABLE `instance_secrets` (
	`instance_id` text PRIMARY KEY NOT NULL,
	`cookie_keys_sealed` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `login_throttle` (
	`key` text PRIMARY KEY NOT NULL,
	`failures` integer NOT NULL,
	`window_start` integer NOT NULL,
	`locked_until` integer
);
--> statement-breakpoint
CREATE TABLE `oidc_payloads` (
	`instance_id` text NOT NULL,
	`model` text NOT NULL,
	`id` text NOT NULL,
	`payload` text NOT NULL,
	`grant_id` text,
	`user_code` text,
	`uid` text,
	`expires_at` integer,
	`consumed_at` integer,
	PRIMARY KEY(`instance_id`, `model`, `id`)
);
--> statement-breakpoint
CREATE INDEX `oidc_payloads_grant_idx` ON `oidc_payloads` (`instance_id`,`grant_id`);--> statement-breakpoint
CREATE INDEX `oidc_payloads_user_code_idx` ON `oidc_payloads` (`instance_id`,`user_code`);--> statement-breakpoint
CREATE INDEX `oidc_payloads_uid_idx` ON `oidc_payloads` (`instance_id`,`uid`);--> statement-breakpoint
CREATE INDEX `oidc_payloads_expires_idx` ON `oidc_payloads` (`expires_at`);--> statement-breakpoint
CREATE TABLE `login_requests` (
	`state` text PRIMARY KEY NOT NULL,
	`nonce` text NOT NULL,
	`code_verifier` text NOT NULL,
	`next` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`csrf_token` text NOT NULL,
	`id_token_sealed` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_account_idx` ON `sessions` (`account_id`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`owner_id` text NOT NULL,
	`state` text DEFAULT 'provisioning' NOT NULL,
	`plan` text DEFAULT 'free' NOT NULL,
	`provisioning_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `workspaces_owner_idx` ON `workspaces` (`owner_id`);