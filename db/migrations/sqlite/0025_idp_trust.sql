ALTER TABLE `idps` ADD `trust_email` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `idps` ADD `trust_mfa` integer DEFAULT false NOT NULL;