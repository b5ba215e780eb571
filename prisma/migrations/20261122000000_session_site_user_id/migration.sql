-- The account a session belongs to is (site_id, Number(user_id)); the site's user object holds
-- that number as its id. SQLite adds a NOT NULL column only with a default.
ALTER TABLE "sessions" ADD COLUMN "site_user_id" BIGINT NOT NULL DEFAULT 0;
UPDATE "sessions" SET "site_user_id" = CAST(json_extract("user_info", '$.id') AS INTEGER);

-- DropIndex
DROP INDEX "sessions_site_id_user_id_idx";

-- CreateIndex
CREATE INDEX "sessions_site_id_site_user_id_idx" ON "sessions"("site_id", "site_user_id");
