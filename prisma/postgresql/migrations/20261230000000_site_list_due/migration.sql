-- The hourly pass takes the sites whose list is due by an indexed time; the accounts' sides are read daily.
ALTER TABLE "site_price_reads" ADD COLUMN "next_at" TIMESTAMP(3);

CREATE INDEX "site_price_reads_next_at_idx" ON "site_price_reads"("next_at");

-- Each list read so far is due at once (one read of each list after the upgrade).
UPDATE "site_price_reads" SET "next_at" = "read_at";
