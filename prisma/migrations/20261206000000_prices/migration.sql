-- CreateTable
CREATE TABLE "site_prices" (
    "site_id" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "input_per_m" REAL,
    "output_per_m" REAL,
    "per_call" REAL,
    "groups" TEXT,

    PRIMARY KEY ("site_id", "model")
);

-- CreateTable
CREATE TABLE "site_price_changes" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "site_id" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "at" DATETIME NOT NULL,
    "input_per_m" REAL,
    "output_per_m" REAL,
    "per_call" REAL
);

-- CreateTable
CREATE TABLE "site_price_reads" (
    "site_id" INTEGER NOT NULL PRIMARY KEY,
    "read_at" DATETIME NOT NULL,
    "published" BOOLEAN NOT NULL,
    "group_ratios" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "account_prices" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "group" TEXT NOT NULL,
    "group_ratio" REAL,
    "models" TEXT NOT NULL,
    "derived" TEXT NOT NULL,
    "read_at" DATETIME NOT NULL,
    "error" TEXT,

    PRIMARY KEY ("site_id", "site_user_id")
);

-- CreateIndex
CREATE INDEX "site_price_changes_site_id_model_at_idx" ON "site_price_changes"("site_id", "model", "at");
