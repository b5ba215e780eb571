-- CreateTable
CREATE TABLE "alert_settings" (
    "workspace_id" INTEGER NOT NULL PRIMARY KEY,
    "time_zone" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "alert_channels" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "workspace_id" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "settings" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "alert_rules" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "workspace_id" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "account_id" INTEGER,
    "threshold" REAL,
    "step" REAL,
    "channels" TEXT NOT NULL,
    "remind" BOOLEAN NOT NULL DEFAULT false,
    "muted" BOOLEAN NOT NULL DEFAULT false,
    "created_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "alerts" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "rule_id" INTEGER NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "account_id" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "threshold" REAL,
    "state" TEXT NOT NULL,
    "value" REAL,
    "notified" REAL,
    "notified_at" DATETIME,
    "clearing" BOOLEAN NOT NULL DEFAULT false,
    "message" TEXT NOT NULL,
    "since" DATETIME NOT NULL,
    "opened_at" DATETIME,
    "resolved_at" DATETIME,
    "live_key" TEXT
);

-- CreateTable
CREATE TABLE "alert_deliveries" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "alert_id" INTEGER NOT NULL,
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

-- CreateIndex
CREATE INDEX "alert_channels_workspace_id_idx" ON "alert_channels"("workspace_id");

-- CreateIndex
CREATE INDEX "alert_rules_workspace_id_idx" ON "alert_rules"("workspace_id");

-- CreateIndex
CREATE UNIQUE INDEX "alerts_live_key_key" ON "alerts"("live_key");

-- CreateIndex
CREATE INDEX "alerts_workspace_id_since_idx" ON "alerts"("workspace_id", "since");

-- CreateIndex
CREATE INDEX "alert_deliveries_status_next_at_idx" ON "alert_deliveries"("status", "next_at");

-- CreateIndex
CREATE INDEX "alert_deliveries_alert_id_idx" ON "alert_deliveries"("alert_id");
