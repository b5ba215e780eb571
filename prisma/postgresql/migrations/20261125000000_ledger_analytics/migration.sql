-- DropIndex
DROP INDEX "ledger_entries_site_id_site_user_id_at_idx";

-- CreateTable
CREATE TABLE "ledger_hours" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "hour" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "token_name" TEXT NOT NULL,
    "requests" INTEGER NOT NULL,
    "quota" BIGINT NOT NULL,
    "prompt_tokens" BIGINT NOT NULL,
    "completion_tokens" BIGINT NOT NULL,

    CONSTRAINT "ledger_hours_pkey" PRIMARY KEY ("site_id","site_user_id","hour","type","model","token_name")
);

-- CreateTable
CREATE TABLE "ledger_hour_totals" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "hour" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "requests" INTEGER NOT NULL,
    "quota" BIGINT NOT NULL,
    "prompt_tokens" BIGINT NOT NULL,
    "completion_tokens" BIGINT NOT NULL,

    CONSTRAINT "ledger_hour_totals_pkey" PRIMARY KEY ("site_id","site_user_id","hour","type")
);

-- CreateTable
CREATE TABLE "balance_snapshots" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "at" INTEGER NOT NULL,
    "quota" BIGINT NOT NULL,
    "used_quota" BIGINT NOT NULL,
    "request_count" INTEGER NOT NULL,

    CONSTRAINT "balance_snapshots_pkey" PRIMARY KEY ("site_id","site_user_id","at")
);


-- Backfill: the hours of entries synced before these tables existed.
INSERT INTO "ledger_hours" ("site_id", "site_user_id", "hour", "type", "model", "token_name", "requests", "quota", "prompt_tokens", "completion_tokens")
SELECT "site_id", "site_user_id", ("at" / 3600) * 3600, "type", "model", "token_name", COUNT(*), SUM("quota"), SUM("prompt_tokens"), SUM("completion_tokens")
FROM "ledger_entries"
GROUP BY "site_id", "site_user_id", ("at" / 3600) * 3600, "type", "model", "token_name";

INSERT INTO "ledger_hour_totals" ("site_id", "site_user_id", "hour", "type", "requests", "quota", "prompt_tokens", "completion_tokens")
SELECT "site_id", "site_user_id", "hour", "type", SUM("requests"), SUM("quota"), SUM("prompt_tokens"), SUM("completion_tokens")
FROM "ledger_hours"
GROUP BY "site_id", "site_user_id", "hour", "type";

