-- CreateTable
CREATE TABLE "job_leases" (
    "name" TEXT NOT NULL,
    "holder" TEXT,
    "lease_until" TIMESTAMP(3),
    "ran_at" TIMESTAMP(3),

    CONSTRAINT "job_leases_pkey" PRIMARY KEY ("name")
);
