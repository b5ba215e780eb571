/**
 * Requests to addresses a person or a site controls (alert channels): bounded in time and size,
 * no redirect followed, and never to a loopback, private, link-local or otherwise internal
 * address unless the operator allows it. The address is checked as it is connected to (the
 * resolver's answer itself), so a name that resolves elsewhere the second time gains nothing.
 */
import { BlockList, isIP } from "node:net";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";

/** Ranges no outbound request goes to by default (RFC 6890 special-purpose, and the like). */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  INTERNAL.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  INTERNAL.addSubnet(net, prefix, "ipv6");
}

export function isInternalAddress(address: string): boolean {
  const kind = isIP(address);
  if (kind === 0) return true;
  if (kind === 6 && address.toLowerCase().startsWith("::ffff:")) {
    const v4 = address.slice(7);
    if (isIP(v4) === 4) return INTERNAL.check(v4, "ipv4");
  }
  return INTERNAL.check(address, kind === 4 ? "ipv4" : "ipv6");
}

export class OutboundRefused extends Error {}

export type OutboundOptions = {
  timeoutMs: number;
  maxBytes: number;
  allowPrivate: boolean;
};

export type OutboundAnswer = { status: number; body: string };

/** The URL a person gave, checked before anything is sent: http(s), no credentials, a host. */
export function checkOutboundUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused("地址无效");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new OutboundRefused("地址须以 http:// 或 https:// 开头");
  if (url.username || url.password) throw new OutboundRefused("地址中不能包含用户名或密码");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0 && !allowPrivate && isInternalAddress(host)) {
    throw new OutboundRefused("不能发送到内网、本机或保留地址（管理员可设置 ALERT_ALLOW_PRIVATE=1 允许）");
  }
  return url;
}

/** POSTs a body; the answer's status and at most `maxBytes` of its text. Redirects are answers, not followed. */
export function postOutbound(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: OutboundOptions,
): Promise<OutboundAnswer> {
  const url = checkOutboundUrl(rawUrl, opts.allowPrivate);
  const lookup: typeof dnsLookup = ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      const usable = opts.allowPrivate ? addresses : addresses.filter((a) => !isInternalAddress(a.address));
      if (usable.length === 0) {
        return callback(
          new OutboundRefused("不能发送到内网、本机或保留地址（管理员可设置 ALERT_ALLOW_PRIVATE=1 允许）"),
        );
      }
      const wantAll = (options as { all?: boolean }).all === true;
      if (wantAll) return callback(null, usable);
      const first = usable[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  }) as typeof dnsLookup;
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers },
        lookup,
        // A connection of its own each time: the address is checked as it is connected to.
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) {
            res.destroy();
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") });
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    // One limit for the whole exchange: connecting, sending and the answer.
    const timer = setTimeout(() => req.destroy(new OutboundRefused("连接超时")), opts.timeoutMs);
    req.on("close", () => clearTimeout(timer));
    req.on("error", reject);
    req.end(body);
  });
}
