/**
 * The client address from X-Forwarded-For: its right-most entry. The production server
 * (scripts/server.ts) sets the header to the socket's address unless TRUST_PROXY is set; behind a
 * trusted proxy the right-most entry is the one that proxy appended.
 */
export function clientAddressFrom(forwardedFor: string | null | undefined): string | null {
  const hops = (forwardedFor ?? "").split(",").map((h) => h.trim()).filter(Boolean);
  return hops[hops.length - 1] ?? null;
}
