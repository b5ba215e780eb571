-- What a site's /api/status said when last probed.
ALTER TABLE "sites" ADD COLUMN "family" TEXT;
ALTER TABLE "sites" ADD COLUMN "version" TEXT;
ALTER TABLE "sites" ADD COLUMN "system_name" TEXT;
ALTER TABLE "sites" ADD COLUMN "quota_per_unit" REAL;
ALTER TABLE "sites" ADD COLUMN "display_type" TEXT;
ALTER TABLE "sites" ADD COLUMN "currency_symbol" TEXT;
ALTER TABLE "sites" ADD COLUMN "currency_rate" REAL;
ALTER TABLE "sites" ADD COLUMN "probed_at" DATETIME;
