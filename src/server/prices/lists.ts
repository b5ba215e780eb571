/**
 * The sites' published lists as 核对 reads them (docs/design.md 27): each model's figures at any
 * time from the kept changes, the group ratios as last read, each account's group. A list before
 * the site was first read is taken to be the first list read (the history starts there); a model
 * listed only later was not on it. One source per pass: a site's history is read once.
 */
import type { Db } from "../db/client";
import type { ListSource, SiteList } from "../ledger/check";
import type { ListFigures } from "../gateway/list-check";
import { figuresOf, priceStore } from "./store";

type Change = { at: number; figures: ListFigures | null };

/** The model's figures at `at`: its last change by then, else its first when that came with the site's first read. */
function figuresAt(changes: Change[] | undefined, at: number, firstRead: number): ListFigures | null {
  if (!changes || changes.length === 0) return null;
  let found: Change | null = null;
  for (const c of changes) {
    if (c.at > at) break;
    found = c;
  }
  if (found) return found.figures;
  const first = changes[0] as Change;
  return first.at === firstRead ? first.figures : null;
}

export function listSource(db: Db): ListSource {
  const loaded = new Map<number, SiteList | null>();
  const prices = priceStore(db);
  return {
    async sites(siteIds) {
      const missing = siteIds.filter((id) => !loaded.has(id));
      if (missing.length > 0) {
        const reads = await prices.siteReads(missing);
        const rows = await db.sitePriceChange.findMany({
          where: { siteId: { in: [...reads.keys()] } },
          orderBy: [{ at: "asc" }, { id: "asc" }],
          select: { siteId: true, model: true, at: true, inputPerM: true, outputPerM: true, perCall: true },
        });
        for (const id of missing) {
          const read = reads.get(id);
          if (!read) {
            loaded.set(id, null);
            continue;
          }
          const byModel = new Map<string, Change[]>();
          let firstRead = Infinity;
          for (const r of rows) {
            if (r.siteId !== id) continue;
            const at = Math.floor(r.at.getTime() / 1000);
            firstRead = Math.min(firstRead, at);
            const list = byModel.get(r.model) ?? [];
            list.push({ at, figures: figuresOf(r) });
            byModel.set(r.model, list);
          }
          loaded.set(id, {
            published: read.published,
            groupRatios: read.groupRatios,
            priceAt: (model, at) => figuresAt(byModel.get(model), at, firstRead),
          });
        }
      }
      const out = new Map<number, SiteList>();
      for (const id of siteIds) {
        const list = loaded.get(id);
        if (list) out.set(id, list);
      }
      return out;
    },
    async groups(owners) {
      const sides = await prices.accounts(owners);
      return new Map([...sides].map(([key, side]) => [key, side.group]));
    },
  };
}
