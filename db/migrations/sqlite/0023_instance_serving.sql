ALTER TABLE `instance_secrets` ADD `serving` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `instance_secrets` ADD `data_plane_rps` integer;--> statement-breakpoint
-- What each instance serves under is its workspace's state, plan and rate, kept here by the database
-- itself on every write of either table, whoever makes it (the service, a job, `store copy`, an
-- operator's SQL): the identity plane reads an instance's state with its keys, one read.
UPDATE `instance_secrets` SET
  `serving` = (SELECT w.`state` = 'active' FROM `workspaces` w WHERE w.`id` = `instance_secrets`.`instance_id`),
  `data_plane_rps` = (SELECT CASE WHEN w.`plan` = 'free' THEN NULL ELSE w.`data_plane_rps` END FROM `workspaces` w WHERE w.`id` = `instance_secrets`.`instance_id`)
WHERE `instance_id` IN (SELECT `id` FROM `workspaces`);
--> statement-breakpoint
CREATE TRIGGER `workspaces_serving_insert` AFTER INSERT ON `workspaces` BEGIN
  UPDATE `instance_secrets` SET `serving` = (NEW.`state` = 'active'),
    `data_plane_rps` = CASE WHEN NEW.`plan` = 'free' THEN NULL ELSE NEW.`data_plane_rps` END
  WHERE `instance_id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `workspaces_serving_update` AFTER UPDATE OF `state`, `plan`, `data_plane_rps` ON `workspaces` BEGIN
  UPDATE `instance_secrets` SET `serving` = (NEW.`state` = 'active'),
    `data_plane_rps` = CASE WHEN NEW.`plan` = 'free' THEN NULL ELSE NEW.`data_plane_rps` END
  WHERE `instance_id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_secrets_serving` AFTER INSERT ON `instance_secrets` BEGIN
  UPDATE `instance_secrets` SET
    `serving` = COALESCE((SELECT w.`state` = 'active' FROM `workspaces` w WHERE w.`id` = NEW.`instance_id`), 0),
    `data_plane_rps` = (SELECT CASE WHEN w.`plan` = 'free' THEN NULL ELSE w.`data_plane_rps` END FROM `workspaces` w WHERE w.`id` = NEW.`instance_id`)
  WHERE `instance_id` = NEW.`instance_id`;
END;
