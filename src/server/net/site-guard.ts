/**
 * Calls to the sites workspaces added themselves are bound like alert channels' (docs/design.md
 * 29): the address is checked as it is connected to, on the resolver's own answer, so a name that
 * resolves to a loopback, private or reserved address the second time reaches nothing, unless the
 * operator allows private ones (WORKSPACE_SITES_ALLOW_PRIVATE). The operator's sites are called as
 * before: the operator chose them.
 *
 * Which addresses are guarded is kept per process: set from the store at start and every minute,
 * and at once on the instance where a workspace adds or drops a site.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { Agent, fetch as undiciFetch } from "undici";
import { checkOutboundUrl, isInternalAddress, OutboundRefused } from "./outbound";

export const PRIVATE_REFUSAL = "站点地址指向内网、本机或保留地址（管理员可设置 WORKSPACE_SITES_ALLOW_PRIVATE=1 允许）";

type Guard = { urls: Set<string>; agent: Agent | null };
const holder = globalThis as { gdSiteGuard?: Guard };
const guard = (): Guard => (holder.gdSiteGuard ??= { urls: new Set(), agent: null });

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

/** A resolver that answers public addresses only. */
const publicLookup: typeof dnsLookup = ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error);
    const usable = addresses.filter((a) => !isInternalAddress(a.address));
    if (usable.length === 0) return callback(new OutboundRefused(PRIVATE_REFUSAL));
    if ((options as { all?: boolean }).all === true) return callback(null, usable);
    const first = usable[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
}) as typeof dnsLookup;

/**
 * A fetch for a guarded site: a literal address is checked before anything is sent, a name as it
 * is connected to. With private addresses allowed it is the platform's fetch.
 */
export function guardedFetch(url: string, init: RequestInit, allowPrivate: boolean): Promise<Response> {
  if (allowPrivate) return fetch(url, init);
  try {
    // A literal internal address (or credentials in the address) is refused before connecting.
    checkOutboundUrl(url, false);
  } catch {
    return Promise.reject(new OutboundRefused(PRIVATE_REFUSAL));
  }
  const g = guard();
  g.agent ??= new Agent({ connect: { lookup: publicLookup }, connections: 64 });
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  return undiciFetch(url, {
    method: init.method ?? "GET",
    headers,
    body: (init.body as string | undefined) ?? null,
    redirect: init.redirect ?? "manual",
    signal: init.signal ?? null,
    dispatcher: g.agent,
  }) as unknown as Promise<Response>;
}

/** Whether an error came of a guarded call refused for its address. */
export function refusedForAddress(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    if (e instanceof OutboundRefused) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
