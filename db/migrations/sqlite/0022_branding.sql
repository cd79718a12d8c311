CREATE TABLE `branding_logos` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`content_type` text NOT NULL,
	`data_base64` text NOT NULL,
	`version` text NOT NULL,
	`size` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `brandings` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`display_name` text,
	`primary_color` text,
	`background_color` text,
	`text_color` text,
	`privacy_policy_url` text,
	`terms_url` text,
	`updated_at` integer NOT NULL
);
