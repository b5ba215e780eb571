-- CreateTable
CREATE TABLE "site_prices" (
    "site_id" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "input_per_m" DOUBLE PRECISION,
    "output_per_m" DOUBLE PRECISION,
    "per_call" DOUBLE PRECISION,
    "groups" TEXT,

    CONSTRAINT "site_prices_pkey" PRIMARY KEY ("site_id","model")
);

-- CreateTable
CREATE TABLE "site_price_changes" (
    "id" SERIAL NOT NULL,
    "site_id" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "input_per_m" DOUBLE PRECISION,
    "output_per_m" DOUBLE PRECISION,
    "per_call" DOUBLE PRECISION,

    CONSTRAINT "site_price_changes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "site_price_reads" (
    "site_id" INTEGER NOT NULL,
    "read_at" TIMESTAMP(3) NOT NULL,
    "published" BOOLEAN NOT NULL,
    "group_ratios" TEXT NOT NULL,

    CONSTRAINT "site_price_reads_pkey" PRIMARY KEY ("site_id")
);

-- CreateTable
CREATE TABLE "account_prices" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "group" TEXT NOT NULL,
    "group_ratio" DOUBLE PRECISION,
    "models" TEXT NOT NULL,
    "derived" TEXT NOT NULL,
    "read_at" TIMESTAMP(3) NOT NULL,
    "error" TEXT,

    CONSTRAINT "account_prices_pkey" PRIMARY KEY ("site_id","site_user_id")
);

-- CreateIndex
CREATE INDEX "site_price_changes_site_id_model_at_idx" ON "site_price_changes"("site_id", "model", "at");
