-- CreateTable
CREATE TABLE "site_budget_slots" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "site_id" INTEGER NOT NULL,
    "at" BIGINT NOT NULL,
    "background" BOOLEAN NOT NULL,
    "token" TEXT NOT NULL,
    "busy_until" BIGINT
);

-- CreateTable
CREATE TABLE "site_budget_pauses" (
    "site_id" INTEGER NOT NULL PRIMARY KEY,
    "until" BIGINT NOT NULL
);

-- CreateIndex
CREATE INDEX "site_budget_slots_site_id_at_idx" ON "site_budget_slots"("site_id", "at");
