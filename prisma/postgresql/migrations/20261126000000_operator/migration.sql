-- AlterTable
ALTER TABLE "sites" ADD COLUMN     "health_at" TIMESTAMP(3),
ADD COLUMN     "health_error" TEXT,
ADD COLUMN     "health_ms" INTEGER,
ADD COLUMN     "health_ok" BOOLEAN,
ADD COLUMN     "requests_per_minute" INTEGER;

-- CreateTable
CREATE TABLE "operator" (
    "id" INTEGER NOT NULL,
    "password_hash" TEXT NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "operator_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "operator_sessions" (
    "id" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "operator_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" SERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "action" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "site_id" INTEGER,
    "before" TEXT,
    "after" TEXT,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "operator_sessions_expires_at_idx" ON "operator_sessions"("expires_at");

-- CreateIndex
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");

