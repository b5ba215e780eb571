-- A restore under way in a workspace: one at a time, and undone whole when it fails or its process dies.
CREATE TABLE "workspace_restores" (
    "workspace_id" INTEGER NOT NULL,
    "held_until" TIMESTAMP(3) NOT NULL,
    "made" TEXT NOT NULL DEFAULT '{}',

    CONSTRAINT "workspace_restores_pkey" PRIMARY KEY ("workspace_id")
);
