import type { LiveSession } from "../session/store";

/**
 * Two sites of one name among the accounts a page or an export shows are told apart by their
 * address (`演示站点（api.example.com）`) wherever they are named: tables, charts, exports.
 */
export function namedApart<T extends { site: { id: number; name: string } | null }>(
  readers: T[],
  sessions: LiveSession[],
): T[] {
  const ids = new Map<string, Set<number>>();
  for (const r of readers) if (r.site) ids.set(r.site.name, (ids.get(r.site.name) ?? new Set()).add(r.site.id));
  const urls = new Map(sessions.flatMap((s) => (s.site ? [[s.site.id, s.site.url] as const] : [])));
  return readers.map((r) => {
    if (!r.site || (ids.get(r.site.name)?.size ?? 0) < 2) return r;
    const url = urls.get(r.site.id);
    const host = url ? new URL(url).host : `编号 ${r.site.id}`;
    return { ...r, site: { ...r.site, name: `${r.site.name}（${host}）` } };
  });
}
