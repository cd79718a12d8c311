-- The platform instance's clients (console, CLI) are defined in code (src/identity/platform.ts):
-- the rows earlier versions kept in step at start-up go.
DELETE FROM `apps` WHERE `instance_id` = 'platform';
