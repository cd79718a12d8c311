DROP INDEX "apps_workspace_idx";--> statement-breakpoint
-- A workspace's apps in creation order: its listing, and its oldest four below, read that far only.
CREATE INDEX "apps_workspace_idx" ON "apps" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
ALTER TABLE "instance_secrets" ADD COLUMN "clients" text;--> statement-breakpoint
-- An instance's oldest apps (four at most) as its clients, with the fields of the plane's client
-- record, kept here by the database itself on every write of "apps" or of the instance's row,
-- whoever makes it (the apps service, teardown, `store copy`, an operator's SQL): a cold instance's
-- first token finds its client in what the load read (keys.ts). The rest are read by id (clients.ts).
CREATE FUNCTION "instance_clients_of"(workspace text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT COALESCE(json_agg(json_build_object('clientId', a."client_id", 'name', a."name",
    'clientSecretHash', a."client_secret_hash", 'type', a."app_type", 'redirectUris', a."redirect_uris"::json,
    'postLogoutRedirectUris', a."post_logout_redirect_uris"::json, 'extraGrants', a."extra_grants"::json))::text, '[]')
  FROM (SELECT * FROM "apps" WHERE "workspace_id" = workspace ORDER BY "created_at", "id" LIMIT 4) a
$$;
--> statement-breakpoint
UPDATE "instance_secrets" SET "clients" = "instance_clients_of"("instance_id");
--> statement-breakpoint
CREATE FUNCTION "apps_instance_clients"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "instance_secrets" SET "clients" = "instance_clients_of"(OLD."workspace_id")
    WHERE "instance_id" = OLD."workspace_id";
  END IF;
  IF TG_OP <> 'DELETE' THEN
    UPDATE "instance_secrets" SET "clients" = "instance_clients_of"(NEW."workspace_id")
    WHERE "instance_id" = NEW."workspace_id";
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "apps_instance_clients" AFTER INSERT OR UPDATE OR DELETE ON "apps"
  FOR EACH ROW EXECUTE FUNCTION "apps_instance_clients"();
--> statement-breakpoint
CREATE FUNCTION "instance_secrets_clients"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."clients" := "instance_clients_of"(NEW."instance_id");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "instance_secrets_clients" BEFORE INSERT ON "instance_secrets"
  FOR EACH ROW EXECUTE FUNCTION "instance_secrets_clients"();
