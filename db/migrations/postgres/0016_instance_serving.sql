ALTER TABLE "instance_secrets" ADD COLUMN "serving" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "instance_secrets" ADD COLUMN "data_plane_rps" integer;--> statement-breakpoint
-- What each instance serves under is its workspace's state, plan and rate, kept here by the database
-- itself on every write of either table, whoever makes it (the service, a job, `store copy`, an
-- operator's SQL): the identity plane reads an instance's state with its keys, one read.
UPDATE "instance_secrets" s SET
  "serving" = (w."state" = 'active'),
  "data_plane_rps" = CASE WHEN w."plan" = 'free' THEN NULL ELSE w."data_plane_rps" END
FROM "workspaces" w WHERE w."id" = s."instance_id";
--> statement-breakpoint
CREATE FUNCTION "workspaces_serving"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "instance_secrets" SET "serving" = (NEW."state" = 'active'),
    "data_plane_rps" = CASE WHEN NEW."plan" = 'free' THEN NULL ELSE NEW."data_plane_rps" END
  WHERE "instance_id" = NEW."id";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "workspaces_serving" AFTER INSERT OR UPDATE OF "state", "plan", "data_plane_rps" ON "workspaces"
  FOR EACH ROW EXECUTE FUNCTION "workspaces_serving"();
--> statement-breakpoint
CREATE FUNCTION "instance_secrets_serving"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT w."state" = 'active', CASE WHEN w."plan" = 'free' THEN NULL ELSE w."data_plane_rps" END
    INTO NEW."serving", NEW."data_plane_rps"
    FROM "workspaces" w WHERE w."id" = NEW."instance_id";
  NEW."serving" := COALESCE(NEW."serving", false);
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "instance_secrets_serving" BEFORE INSERT ON "instance_secrets"
  FOR EACH ROW EXECUTE FUNCTION "instance_secrets_serving"();
