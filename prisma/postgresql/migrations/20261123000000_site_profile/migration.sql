-- What a site's /api/status said when last probed.
ALTER TABLE "sites" ADD COLUMN "family" TEXT,
ADD COLUMN "version" TEXT,
ADD COLUMN "system_name" TEXT,
ADD COLUMN "quota_per_unit" DOUBLE PRECISION,
ADD COLUMN "display_type" TEXT,
ADD COLUMN "currency_symbol" TEXT,
ADD COLUMN "currency_rate" DOUBLE PRECISION,
ADD COLUMN "probed_at" TIMESTAMP(3);
