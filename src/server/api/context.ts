import { env } from "../core/env";
import { db, type Db } from "../db/client";

/** Everything a procedure may know about the HTTP exchange, whichever transport carried it. */
export type Context = {
  db: Db;
  /** Request headers (Authorization, Cookie, Origin, Accept-Language). */
  headers: Headers;
  /** Headers to add to the response (Set-Cookie, Cache-Control). */
  resHeaders: Headers;
  /** Origin this service is served at, e.g. `http://127.0.0.1:3000`. */
  origin: string;
  /** Served over HTTPS: the session cookie is then `Secure` with the `__Host-` prefix. */
  secure: boolean;
  /** A REST request's `?account=`: which of a workspace's accounts it is about (null: none named). */
  accountParam: string | null;
  /** Address of the client, for rate limits; null when unknown. */
  clientAddress: string | null;
  timeoutMs: number;
  loginRateLimit: number;
  /** The operator's sign-in attempts per address and minute (never off). */
  adminLoginRateLimit: number;
  /** Calls this service makes to one site per minute, at most. */
  siteRequestsPerMinute: number;
  /** Longest wait for a slot of that budget; past it the answer is 站点繁忙 (default one minute). */
  siteBudgetWaitMs?: number;
  /** Days of usage the first sync of an account's ledger copies. */
  ledgerBackfillDays: number;
  /** Minutes between automatic syncs of a ledger (and a sync at sign-in); 0: on demand only. */
  ledgerSyncMinutes: number;
};

export type ContextOptions = Partial<Omit<Context, "secure">> & Pick<Context, "db">;

/** Builds a context directly (tests and scripts); defaults describe a local plain-http client. */
export function createContextInner(opts: ContextOptions): Context {
  const origin = opts.origin ?? "http://localhost";
  return {
    headers: new Headers(),
    resHeaders: new Headers(),
    clientAddress: null,
    accountParam: null,
    timeoutMs: env().SITE_TIMEOUT_MS,
    loginRateLimit: env().LOGIN_RATE_LIMIT,
    adminLoginRateLimit: env().ADMIN_LOGIN_RATE_LIMIT,
    siteRequestsPerMinute: env().SITE_REQUESTS_PER_MINUTE,
    ledgerBackfillDays: env().LEDGER_BACKFILL_DAYS,
    ledgerSyncMinutes: env().LEDGER_SYNC_MINUTES,
    ...opts,
    origin,
    secure: origin.startsWith("https:"),
  };
}

/**
 * The origin a request was sent to, from its Host header (what the browser put in Origin too).
 * The production server (scripts/server.ts) keeps X-Forwarded-* only from trusted proxies and
 * otherwise fills X-Forwarded-Proto from the socket.
 */
function requestOrigin(req: Request): string {
  const url = new URL(req.url);
  const first = (name: string) => req.headers.get(name)?.split(",")[0]?.trim() || undefined;
  const proto = first("x-forwarded-proto") ?? url.protocol.replace(":", "");
  const host = (env().TRUST_PROXY.length > 0 ? first("x-forwarded-host") : undefined) ?? first("host") ?? url.host;
  return `${proto}://${host}`;
}

export function createRequestContext(req: Request, resHeaders: Headers): Context {
  return createContextInner({
    db: db(),
    headers: req.headers,
    resHeaders,
    origin: requestOrigin(req),
    accountParam: new URL(req.url).searchParams.get("account"),
    // The production server replaces X-Forwarded-For with the one client address it resolved.
    clientAddress: req.headers.get("x-forwarded-for")?.split(",").pop()?.trim() || null,
  });
}
