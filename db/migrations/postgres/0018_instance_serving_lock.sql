-- The keys' row reads its workspace's state as it is inserted; under READ COMMITTED a change of the
-- workspace committed before the insert commits was lost: that change's trigger could not see the
-- uncommitted row, and the insert kept the state it had read (a workspace suspended meanwhile kept
-- serving). FOR SHARE reads the workspace's latest row, waiting for a change under way, and holds it
-- until the insert commits: a change after it waits, and its trigger then finds the row.
-- (SQLite runs one write at a time: its trigger needs no lock.)
CREATE OR REPLACE FUNCTION "instance_secrets_serving"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT w."state" = 'active', CASE WHEN w."plan" = 'free' THEN NULL ELSE w."data_plane_rps" END
    INTO NEW."serving", NEW."data_plane_rps"
    FROM "workspaces" w WHERE w."id" = NEW."instance_id" FOR SHARE;
  NEW."serving" := COALESCE(NEW."serving", false);
  RETURN NEW;
END $$;
