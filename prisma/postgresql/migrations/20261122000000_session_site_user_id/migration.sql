-- The account a session belongs to is (site_id, Number(user_id)); the site's user object holds
-- that number as its id.
ALTER TABLE "sessions" ADD COLUMN "site_user_id" BIGINT;
UPDATE "sessions" SET "site_user_id" = ("user_info"::jsonb ->> 'id')::numeric::bigint;
ALTER TABLE "sessions" ALTER COLUMN "site_user_id" SET NOT NULL;

-- DropIndex
DROP INDEX "sessions_site_id_user_id_idx";

-- CreateIndex
CREATE INDEX "sessions_site_id_site_user_id_idx" ON "sessions"("site_id", "site_user_id");
