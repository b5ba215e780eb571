-- 核对: each account's verified charges and cache per hour, model and token, and the entries that differ.
CREATE TABLE "ledger_check_hours" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "hour" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "token_name" TEXT NOT NULL,
    "entries" INTEGER NOT NULL,
    "quota" BIGINT NOT NULL,
    "checked" INTEGER NOT NULL,
    "checked_quota" BIGINT NOT NULL,
    "expected" BIGINT NOT NULL,
    "differs" INTEGER NOT NULL,
    "list_checked" INTEGER NOT NULL,
    "list_quota" BIGINT NOT NULL,
    "list_expected" BIGINT NOT NULL,
    "list_differs" INTEGER NOT NULL,
    "over" BIGINT NOT NULL,
    "input_tokens" BIGINT NOT NULL,
    "cache_read" BIGINT NOT NULL,
    "cache_write" BIGINT NOT NULL,
    "cache_saved" BIGINT NOT NULL,
    "cache_cost" BIGINT NOT NULL,

    CONSTRAINT "ledger_check_hours_pkey" PRIMARY KEY ("site_id","site_user_id","hour","model","token_name")
);

CREATE TABLE "ledger_flags" (
    "entry_id" INTEGER NOT NULL,
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "at" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "quota" BIGINT NOT NULL,
    "expected" BIGINT,
    "list_expected" BIGINT,
    "over" BIGINT NOT NULL,
    "note" TEXT NOT NULL,

    CONSTRAINT "ledger_flags_pkey" PRIMARY KEY ("entry_id")
);

CREATE INDEX "ledger_flags_site_id_site_user_id_over_idx" ON "ledger_flags"("site_id", "site_user_id", "over");

CREATE INDEX "ledger_flags_site_id_site_user_id_at_idx" ON "ledger_flags"("site_id", "site_user_id", "at");

CREATE TABLE "ledger_check_state" (
    "id" INTEGER NOT NULL,
    "after" INTEGER NOT NULL,
    "horizon" INTEGER NOT NULL,
    "pending" TEXT NOT NULL,

    CONSTRAINT "ledger_check_state_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "ledger_speed" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "hour" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "bucket" INTEGER NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "ledger_speed_pkey" PRIMARY KEY ("site_id","site_user_id","hour","model","kind","bucket")
);
