/** Runs once when the server starts: the background purge of expired sessions. */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startPurger } = await import("./src/server/session/purger");
  startPurger();
}
