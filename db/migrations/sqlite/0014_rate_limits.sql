CREATE TABLE `rate_limits` (
	`key` text PRIMARY KEY NOT NULL,
	`tat` integer NOT NULL
);
