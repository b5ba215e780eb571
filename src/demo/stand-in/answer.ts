/** How the stand-in answers: the envelope, query numbers, paging, new-api's key mask. */
import type { ServerResponse } from "node:http";

export function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

export const ok = (res: ServerResponse, data: unknown) => send(res, 200, { data, message: "", success: true });

/** new-api's `MaskTokenKey`: first 4 + 10 stars + last 4 (gateway-user-api.md §3.7). */
export function naMask(key: string): string {
  if (key.length > 8) return `${key.slice(0, 4)}**********${key.slice(-4)}`;
  if (key.length > 4) return `${key.slice(0, 2)}****${key.slice(-2)}`;
  return "*".repeat(key.length);
}

export type Query = URLSearchParams;
export const int = (q: Query, name: string): number | undefined => {
  const v = q.get(name);
  return v !== null && /^-?\d+$/.test(v) ? Number(v) : undefined;
};

/** new-api's `GetPageQuery`: 1-based `p`; `page_size`, `ps` or `size`, 10 by default, capped at 100. */
export function newApiPaging(q: Query): { p: number; size: number } {
  return {
    p: Math.max(int(q, "p") ?? 1, 1),
    size: Math.min(int(q, "page_size") ?? int(q, "ps") ?? int(q, "size") ?? 10, 100),
  };
}

/** one-hub's paging: `page` (1-based) and `size`; over 100 is refused. null once the refusal is answered. */
export function hubPaging(q: Query, res: ServerResponse): { page: number; size: number } | null {
  const page = Math.max(int(q, "page") ?? 1, 1);
  let size = int(q, "size") ?? 10;
  if (size < 1) size = 10;
  if (size > 100) {
    send(res, 200, { success: false, message: "size 参数不能超过 100" });
    return null;
  }
  return { page, size };
}
