/**
 * Calls to the sites workspaces added themselves are bound like alert channels' (docs/design.md
 * 25): the address is checked as it is connected to, on the resolver's own answer, so a name that
 * resolves to a loopback, private or reserved address the second time reaches nothing, unless the
 * operator allows private ones (WORKSPACE_SITES_ALLOW_PRIVATE). The operator's sites are called as
 * before: the operator chose them.
 *
 * Which addresses are guarded is kept per process: set from the store at start and every minute,
 * and at once on the instance where a workspace adds or drops a site.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { checkOutboundUrl, isInternalAddress, OutboundRefused } from "./outbound";

export const PRIVATE_REFUSAL = "站点地址指向内网、本机或保留地址（管理员可设置 WORKSPACE_SITES_ALLOW_PRIVATE=1 允许）";

type Guard = { urls: Set<string> };
const holder = globalThis as { gdSiteGuard?: Guard };
const guard = (): Guard => (holder.gdSiteGuard ??= { urls: new Set() });

/** The addresses of the workspaces' own sites (replacing those known before). */
export function guardSites(urls: Iterable<string>): void {
  guard().urls = new Set(urls);
}

/** One more address to guard (a site just added, before the next refresh). */
export function guardSite(url: string): void {
  guard().urls.add(url);
}

/** An address no longer a workspace's own (the operator registered it). */
export function unguardSite(url: string): void {
  guard().urls.delete(url);
}

export function isGuarded(siteUrl: string): boolean {
  return guard().urls.has(siteUrl.replace(/\/+$/, ""));
}

/** A resolver that answers only the addresses `refused` lets through (public ones). */
const lookupWithout = (refused: (address: string) => boolean): typeof dnsLookup =>
  ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      const usable = addresses.filter((a) => !refused(a.address));
      if (usable.length === 0) return callback(new OutboundRefused(PRIVATE_REFUSAL));
      if ((options as { all?: boolean }).all === true) return callback(null, usable);
      const first = usable[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  }) as typeof dnsLookup;

/**
 * A fetch for a guarded site: a literal address is checked before anything is sent, a name as it
 * is connected to (each call on a connection of its own). With private addresses allowed it is the
 * platform's fetch. Written on node:http rather than with a dispatcher of the undici package: that
 * package, once loaded, installs its own agent as the platform fetch's for every other call too.
 */
export function guardedFetch(
  url: string,
  init: RequestInit,
  allowPrivate: boolean,
  /** Which resolved addresses are refused (internal ones; a test may name others). */
  refused: (address: string) => boolean = isInternalAddress,
): Promise<Response> {
  if (allowPrivate) return fetch(url, init);
  let target: URL;
  try {
    // A literal internal address (or credentials in the address) is refused before connecting.
    target = checkOutboundUrl(url, false);
  } catch {
    return Promise.reject(new OutboundRefused(PRIVATE_REFUSAL));
  }
  const client = target.protocol === "https:" ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: init.method ?? "GET",
        headers: Object.fromEntries(new Headers(init.headers).entries()),
        lookup: lookupWithout(refused),
        agent: false,
        signal: init.signal ?? undefined,
      },
      (res) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
        }
        const status = res.statusCode ?? 0;
        try {
          // A redirect is an answer here, never followed (as `redirect: "manual"`).
          const body = status === 204 || status === 304 ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          resolve(new Response(body, { status, headers }));
        } catch (error) {
          // A status no HTTP answer has (a hostile site's 999): as a broken answer.
          res.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      },
    );
    req.on("error", reject);
    req.end(typeof init.body === "string" ? init.body : undefined);
  });
}

/** Whether an error came of a guarded call refused for its address. */
export function refusedForAddress(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    if (e instanceof OutboundRefused) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
