CREATE TABLE `login_policies` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`allow_password` integer NOT NULL,
	`allow_registration` integer NOT NULL,
	`allow_external_idps` integer NOT NULL,
	`require_email_verification` integer NOT NULL,
	`mfa` text NOT NULL,
	`password_min_length` integer NOT NULL,
	`lockout_threshold` integer NOT NULL,
	`lockout_minutes` integer NOT NULL,
	`session_lifetime_hours` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
-- Workspaces that existed before login policies start with DESIGN's defaults (as provisioning gives new ones).
INSERT INTO `login_policies` (`workspace_id`, `allow_password`, `allow_registration`, `allow_external_idps`, `require_email_verification`, `mfa`, `password_min_length`, `lockout_threshold`, `lockout_minutes`, `session_lifetime_hours`, `updated_at`)
SELECT `id`, 1, 1, 1, 1, 'off', 8, 5, 15, 168, `updated_at` FROM `workspaces` WHERE `state` <> 'deleting';
