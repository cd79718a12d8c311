-- Apps belong to a workspace: the owning column has the one name every feature uses (workspace_id).
DROP INDEX `apps_instance_idx`;--> statement-breakpoint
ALTER TABLE `apps` RENAME COLUMN `instance_id` TO `workspace_id`;--> statement-breakpoint
CREATE INDEX `apps_workspace_idx` ON `apps` (`workspace_id`);
