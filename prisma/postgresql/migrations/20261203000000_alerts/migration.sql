-- CreateTable
CREATE TABLE "alert_settings" (
    "workspace_id" INTEGER NOT NULL,
    "time_zone" TEXT NOT NULL,

    CONSTRAINT "alert_settings_pkey" PRIMARY KEY ("workspace_id")
);

-- CreateTable
CREATE TABLE "alert_channels" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "settings" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "alert_channels_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_rules" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "account_id" INTEGER,
    "threshold" DOUBLE PRECISION,
    "step" DOUBLE PRECISION,
    "channels" TEXT NOT NULL,
    "remind" BOOLEAN NOT NULL DEFAULT false,
    "muted" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "alert_rules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alerts" (
    "id" SERIAL NOT NULL,
    "rule_id" INTEGER NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "account_id" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "threshold" DOUBLE PRECISION,
    "state" TEXT NOT NULL,
    "value" DOUBLE PRECISION,
    "notified" DOUBLE PRECISION,
    "notified_at" TIMESTAMP(3),
    "clearing" BOOLEAN NOT NULL DEFAULT false,
    "message" TEXT NOT NULL,
    "since" TIMESTAMP(3) NOT NULL,
    "opened_at" TIMESTAMP(3),
    "resolved_at" TIMESTAMP(3),
    "live_key" TEXT,

    CONSTRAINT "alerts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_deliveries" (
    "id" SERIAL NOT NULL,
    "alert_id" INTEGER NOT NULL,
    "channel_id" INTEGER NOT NULL,
    "event" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_at" TIMESTAMP(3) NOT NULL,
    "claimed_until" TIMESTAMP(3),
    "last_error" TEXT,
    "sent_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "alert_deliveries_pkey" PRIMARY KEY ("id")
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
