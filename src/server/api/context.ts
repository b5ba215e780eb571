import type { Db } from "../db/client";
import { db } from "../db/client";
import { env } from "../env";
import { clientAddressFrom } from "../http/client-address";

/** Everything a procedure may know about the HTTP exchange, whichever transport carried it. */
export type Context = {
  db: Db;
  /** Request headers (Authorization, Cookie, Origin, Accept-Language). */
  headers: Headers;
  /** Headers to add to the response (Set-Cookie, Cache-Control). */
  resHeaders: Headers;
  /** Origin this service is served at, e.g. `http://127.0.0.1:3000`. */
  origin: string;
  /** Address of the client, for rate limits; null when unknown. */
  clientAddress: string | null;
  timeoutMs: number;
  loginRateLimit: number;
};

export type ContextOptions = Partial<Context> & Pick<Context, "db">;

/** Builds a context directly (tests and scripts); defaults describe a local plain-http client. */
export function createContextInner(opts: ContextOptions): Context {
  return {
    headers: new Headers(),
    resHeaders: new Headers(),
    origin: "http://localhost",
    clientAddress: null,
    timeoutMs: env().SITE_TIMEOUT_MS,
    loginRateLimit: env().LOGIN_RATE_LIMIT,
    ...opts,
  };
}

/**
 * The origin a request was sent to, from its Host header (what the browser put in Origin too).
 * Without TRUST_PROXY the production server drops client-sent X-Forwarded-* headers and Next
 * fills X-Forwarded-Proto from the socket; X-Forwarded-Host counts only behind a trusted proxy.
 */
function requestOrigin(req: Request): string {
  const url = new URL(req.url);
  const first = (name: string) => req.headers.get(name)?.split(",")[0]?.trim() || undefined;
  const proto = first("x-forwarded-proto") ?? url.protocol.replace(":", "");
  const host = (env().TRUST_PROXY ? first("x-forwarded-host") : undefined) ?? first("host") ?? url.host;
  return `${proto}://${host}`;
}

export function createRequestContext(req: Request, resHeaders: Headers): Context {
  return createContextInner({
    db: db(),
    headers: req.headers,
    resHeaders,
    origin: requestOrigin(req),
    clientAddress: clientAddressFrom(req.headers.get("x-forwarded-for")),
  });
}
