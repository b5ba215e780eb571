-- AlterTable: a delivery is of an alert or of a digest
ALTER TABLE "alert_deliveries" ALTER COLUMN "alert_id" DROP NOT NULL,
ADD COLUMN "digest_id" INTEGER;

-- CreateTable
CREATE TABLE "alert_digests" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "cadence" TEXT NOT NULL,
    "minute" INTEGER NOT NULL,
    "weekday" INTEGER,
    "channels" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "last_period" TEXT,
    "last_sent_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "alert_digests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "statement_links" (
    "id" TEXT NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "month" TEXT NOT NULL,
    "time_zone" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "statement_links_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "alert_deliveries_digest_id_idx" ON "alert_deliveries"("digest_id");

-- CreateIndex
CREATE UNIQUE INDEX "alert_digests_workspace_id_cadence_key" ON "alert_digests"("workspace_id", "cadence");

-- CreateIndex
CREATE INDEX "statement_links_expires_at_idx" ON "statement_links"("expires_at");
