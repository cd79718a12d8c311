DROP INDEX `apps_workspace_idx`;--> statement-breakpoint
-- A workspace's apps in creation order: its listing, and its oldest four below, read that far only.
CREATE INDEX `apps_workspace_idx` ON `apps` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `instance_secrets` ADD `clients` text;--> statement-breakpoint
-- An instance's oldest apps (four at most) as its clients, with the fields of the plane's client
-- record, kept here by the database itself on every write of `apps` or of the instance's row,
-- whoever makes it (the apps service, teardown, `store copy`, an operator's SQL): a cold instance's
-- first token finds its client in what the load read (keys.ts). The rest are read by id (clients.ts).
-- The record of each app, once: what every statement below aggregates.
CREATE VIEW `instance_client_records` AS SELECT `id`, json_object('clientId', `client_id`, 'name', `name`,
  'clientSecretHash', `client_secret_hash`, 'type', `app_type`, 'redirectUris', json(`redirect_uris`),
  'postLogoutRedirectUris', json(`post_logout_redirect_uris`), 'extraGrants', json(`extra_grants`)) AS `record`
FROM `apps`;
--> statement-breakpoint
UPDATE `instance_secrets` SET `clients` = (SELECT json_group_array(json(r.`record`)) FROM `instance_client_records` r WHERE r.`id` IN
    (SELECT b.`id` FROM `apps` b WHERE b.`workspace_id` = `instance_secrets`.`instance_id` ORDER BY b.`created_at`, b.`id` LIMIT 4));
--> statement-breakpoint
CREATE TRIGGER `apps_instance_clients_insert` AFTER INSERT ON `apps` BEGIN
  UPDATE `instance_secrets` SET `clients` = (SELECT json_group_array(json(r.`record`)) FROM `instance_client_records` r WHERE r.`id` IN
    (SELECT b.`id` FROM `apps` b WHERE b.`workspace_id` = NEW.`workspace_id` ORDER BY b.`created_at`, b.`id` LIMIT 4))
  WHERE `instance_id` = NEW.`workspace_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `apps_instance_clients_update` AFTER UPDATE ON `apps` BEGIN
  UPDATE `instance_secrets` SET `clients` = (SELECT json_group_array(json(r.`record`)) FROM `instance_client_records` r WHERE r.`id` IN
    (SELECT b.`id` FROM `apps` b WHERE b.`workspace_id` = `instance_secrets`.`instance_id` ORDER BY b.`created_at`, b.`id` LIMIT 4))
  WHERE `instance_id` IN (OLD.`workspace_id`, NEW.`workspace_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `apps_instance_clients_delete` AFTER DELETE ON `apps` BEGIN
  UPDATE `instance_secrets` SET `clients` = (SELECT json_group_array(json(r.`record`)) FROM `instance_client_records` r WHERE r.`id` IN
    (SELECT b.`id` FROM `apps` b WHERE b.`workspace_id` = OLD.`workspace_id` ORDER BY b.`created_at`, b.`id` LIMIT 4))
  WHERE `instance_id` = OLD.`workspace_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_secrets_clients` AFTER INSERT ON `instance_secrets` BEGIN
  UPDATE `instance_secrets` SET `clients` = (SELECT json_group_array(json(r.`record`)) FROM `instance_client_records` r WHERE r.`id` IN
    (SELECT b.`id` FROM `apps` b WHERE b.`workspace_id` = NEW.`instance_id` ORDER BY b.`created_at`, b.`id` LIMIT 4))
  WHERE `instance_id` = NEW.`instance_id`;
END;
