-- Plans as well as wallets: each account's new-api subscriptions as last read, and plan-paid spend per hour.
ALTER TABLE "ledger_sync" ADD COLUMN "plans_read_at" INTEGER;
ALTER TABLE "ledger_sync" ADD COLUMN "plan_preference" TEXT;
ALTER TABLE "ledger_check_hours" ADD COLUMN "plan_entries" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "ledger_check_hours" ADD COLUMN "plan_quota" BIGINT NOT NULL DEFAULT 0;

CREATE TABLE "ledger_plans" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "subscription_id" INTEGER NOT NULL,
    "plan_id" INTEGER NOT NULL,
    "title" TEXT,
    "status" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "total" BIGINT NOT NULL,
    "used" BIGINT NOT NULL,
    "start_at" INTEGER NOT NULL,
    "end_at" INTEGER NOT NULL,
    "next_reset" INTEGER NOT NULL,
    "last_reset" INTEGER NOT NULL,
    "reset_period" TEXT,
    "reset_seconds" INTEGER,
    "overflow" BOOLEAN NOT NULL,

    PRIMARY KEY ("site_id", "site_user_id", "subscription_id")
);

-- The entries the verifying pass already summed: their plan-paid part, from their kept detail.
UPDATE "ledger_check_hours" SET "plan_entries" = s."n", "plan_quota" = s."q"
FROM (
    SELECT "site_id", "site_user_id", ("at" / 3600) * 3600 AS "hour", "model", "token_name",
           count(*) AS "n", sum("quota") AS "q"
    FROM "ledger_entries"
    WHERE "type" = 'consume'
      AND "detail" LIKE '%"billing_source":"subscription"%'
      AND "id" <= (SELECT "after" FROM "ledger_check_state" WHERE "id" = 1)
    GROUP BY "site_id", "site_user_id", ("at" / 3600) * 3600, "model", "token_name"
) AS s
WHERE "ledger_check_hours"."site_id" = s."site_id"
  AND "ledger_check_hours"."site_user_id" = s."site_user_id"
  AND "ledger_check_hours"."hour" = s."hour"
  AND "ledger_check_hours"."model" = s."model"
  AND "ledger_check_hours"."token_name" = s."token_name";
