import { BlockList, isIPv4, isIPv6 } from "node:net";

/** `::ffff:192.0.2.1` (an IPv4 client on a dual-stack socket) is `192.0.2.1`. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

/** One entry of TRUST_PROXY: an address or a CIDR range; null when it is neither. */
export function parseProxyEntry(entry: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } | null {
  const [raw = "", bits, ...rest] = entry.trim().split("/");
  if (rest.length > 0) return null;
  const address = plain(raw);
  const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : null;
  if (!family) return null;
  const max = family === "ipv4" ? 32 : 128;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return null;
  const prefix = bits === undefined ? max : Number(bits);
  return prefix <= max ? { address, prefix, family } : null;
}

/** The proxies whose X-Forwarded-* headers count, from TRUST_PROXY's entries. */
export function trustedProxies(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const parsed = parseProxyEntry(entry);
    if (!parsed) throw new Error(`not an address or CIDR range: ${entry}`);
    list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  return list;
}

function isTrusted(address: string, proxies: BlockList): boolean {
  const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : null;
  return family !== null && proxies.check(address, family);
}

/**
 * The client's address: the socket's peer, unless the peer is a trusted proxy; then the hops of
 * X-Forwarded-For are walked from the right, skipping trusted proxies, and the first untrusted hop
 * is the client. Hops a client wrote itself sit left of that and never count.
 */
export function resolveClientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  proxies: BlockList,
): { address: string | null; viaProxy: boolean } {
  if (!peer) return { address: null, viaProxy: false };
  let address = plain(peer);
  const viaProxy = isTrusted(address, proxies);
  const hops = (forwardedFor ?? "")
    .split(",")
    .map((h) => plain(h.trim()))
    .filter(Boolean);
  while (isTrusted(address, proxies)) {
    const next = hops.pop();
    if (next === undefined) break;
    address = next;
  }
  return { address, viaProxy };
}

/**
 * The rate-limit identity of an address: IPv6 clients are grouped by their /64 (one subscriber
 * usually holds a whole /64 and can pick any address in it).
 */
export function addressBucket(address: string): string {
  const ip = plain(address);
  if (!isIPv6(ip)) return ip;
  const [head = "", tail = ""] = ip.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = ip.includes("::")
    ? [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(":")}::/64`;
}
