CREATE TABLE `try_sign_ins` (
	`key` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`nonce` text NOT NULL,
	`code_verifier` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `try_sign_ins_workspace_idx` ON `try_sign_ins` (`workspace_id`);