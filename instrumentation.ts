/** Runs once when the server starts: the background jobs (never started at import time). */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // The sites' budgets first: the jobs' first calls go through them.
  const { startSharedBudget } = await import("./src/server/jobs/shared-budget");
  await startSharedBudget();
  // The other instances hear of each write that changed an account's kept answers.
  const { startBroadcast } = await import("./src/server/jobs/broadcast");
  await startBroadcast();
  const { startPurges } = await import("./src/server/jobs/purge");
  startPurges();
  const { startLedgerJobs } = await import("./src/server/jobs/ledger");
  startLedgerJobs();
  const { startWorkspaceJobs } = await import("./src/server/jobs/workspace");
  startWorkspaceJobs();
}
