import { env } from "./env";
import { currentRequestId } from "./request-context";

/**
 * Structured logs: one JSON line per event. Callers pass only what is safe to keep; nothing here
 * ever receives a token, a cookie or an access token.
 */
export function logEvent(event: string, fields: Record<string, unknown> = {}): void {
  if (env().LOG_LEVEL !== "info") return;
  const request = currentRequestId();
  process.stdout.write(
    `${JSON.stringify({ time: new Date().toISOString(), event, ...(request ? { request } : {}), ...fields })}\n`,
  );
}

export function logError(event: string, error: unknown): void {
  if (env().LOG_LEVEL === "silent") return;
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  const request = currentRequestId();
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: "error", event, ...(request ? { request } : {}), error: name, message })}\n`,
  );
}

/** Paths whose last part is a secret (a statement link's): logged without it. */
const SECRET_PATH = /\/statement\/[^/]+/g;

/** One line per request: no query string, no headers, no secret of a path, so no token or cookie can reach the log. */
export function logRequest(fields: {
  method: string;
  path: string;
  status: number;
  ms: number;
  client: string | null;
}): void {
  logEvent("request", { ...fields, path: (fields.path.split("?")[0] ?? "").replace(SECRET_PATH, "/statement/***") });
}
