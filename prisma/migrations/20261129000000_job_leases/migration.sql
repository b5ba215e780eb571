-- CreateTable
CREATE TABLE "job_leases" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "holder" TEXT,
    "lease_until" DATETIME,
    "ran_at" DATETIME
);
