-- CreateTable
CREATE TABLE "ledger_topups" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "trade_no" TEXT NOT NULL,
    "at" INTEGER NOT NULL,
    "quota" BIGINT NOT NULL,

    PRIMARY KEY ("site_id", "site_user_id", "trade_no")
);

-- CreateIndex
CREATE INDEX "ledger_topups_site_id_site_user_id_at_idx" ON "ledger_topups"("site_id", "site_user_id", "at");
