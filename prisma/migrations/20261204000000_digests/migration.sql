-- RedefineTables: a delivery is of an alert or of a digest
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_alert_deliveries" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "alert_id" INTEGER,
    "digest_id" INTEGER,
    "channel_id" INTEGER NOT NULL,
    "event" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_at" DATETIME NOT NULL,
    "claimed_until" DATETIME,
    "last_error" TEXT,
    "sent_at" DATETIME,
    "created_at" DATETIME NOT NULL
);
INSERT INTO "new_alert_deliveries" ("id", "alert_id", "channel_id", "event", "payload", "status", "attempts", "next_at", "claimed_until", "last_error", "sent_at", "created_at")
SELECT "id", "alert_id", "channel_id", "event", "payload", "status", "attempts", "next_at", "claimed_until", "last_error", "sent_at", "created_at" FROM "alert_deliveries";
DROP TABLE "alert_deliveries";
ALTER TABLE "new_alert_deliveries" RENAME TO "alert_deliveries";
CREATE INDEX "alert_deliveries_status_next_at_idx" ON "alert_deliveries"("status", "next_at");
CREATE INDEX "alert_deliveries_alert_id_idx" ON "alert_deliveries"("alert_id");
CREATE INDEX "alert_deliveries_digest_id_idx" ON "alert_deliveries"("digest_id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateTable
CREATE TABLE "alert_digests" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "workspace_id" INTEGER NOT NULL,
    "cadence" TEXT NOT NULL,
    "minute" INTEGER NOT NULL,
    "weekday" INTEGER,
    "channels" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "last_period" TEXT,
    "last_sent_at" DATETIME,
    "created_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "statement_links" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "workspace_id" INTEGER NOT NULL,
    "month" TEXT NOT NULL,
    "time_zone" TEXT NOT NULL,
    "expires_at" DATETIME NOT NULL,
    "used_at" DATETIME,
    "created_at" DATETIME NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "alert_digests_workspace_id_cadence_key" ON "alert_digests"("workspace_id", "cadence");

-- CreateIndex
CREATE INDEX "statement_links_expires_at_idx" ON "statement_links"("expires_at");
