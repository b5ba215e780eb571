import { describe, expect, it } from "vitest";
import type { StandInFamily } from "../../src/demo/gateway";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor, signInWith } from "../support/caller";
import type { TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";
import { signInAndSync } from "../support/ledger";

/**
 * Every charge of 使用日志 recomputed from the entry's own tokens and ratios (docs/design.md 27),
 * for the families that log them, whether the page is read from the site or from the ledger: the
 * history's charges hold, and one charged a quarter more than its ratios say is told, with what it
 * should have been.
 */
let store: TempDb;
const open: FamilySite[] = [];
freshStorePerTest((s) => (store = s), open);

const NOW = Math.floor(Date.now() / 1000);

async function siteWithOvercharge(family: StandInFamily) {
  const site = await startFamilySite(family, 0, {}, { days: 2, now: NOW - 60, callsPerDay: 30 });
  open.push(site);
  const consume = site.history.logs.filter((l) => l.type === 2);
  // The costliest call: a quarter more is then well beyond the hubs' one unit of rounding (a
  // small call's quarter may be within it, and which calls are small follows the clock).
  const victim = consume.reduce((a, b) => (b.quota > a.quota ? b : a));
  const fair = victim.quota;
  victim.quota = Math.round(fair * 1.25);
  const { id } = await siteRegistry(store.db).add({ name: `站点 ${family}`, url: site.gateway.url });
  return { site, id, victim, fair, consume: consume.length };
}

describe("the charge check of a log entry", () => {
  it.each(["new-api", "one-hub", "done-hub"] as StandInFamily[])(
    "on %s: every charge holds but the one made a quarter dearer, read live and from the ledger",
    async (family) => {
      const { site, id, victim, fair, consume } = await siteWithOvercharge(family);
      // Live: signed in, nothing synced yet.
      const live = callerFor(store.db, bearer((await signInWith(store.db, id, site.user)).token)).api;
      const fromSite = await live.account.logs({ type: "consume", pageSize: 100 });
      if (!fromSite.success) throw new Error(fromSite.message);
      // From the ledger, after a sync.
      const { token } = await signInAndSync(store.db, id, site.user, NOW);
      const ledger = await callerFor(store.db, bearer(token)).api.account.logs({ type: "consume", pageSize: 100 });
      if (!ledger.success) throw new Error(ledger.message);
      expect(ledger.data.source).toBe("ledger");
      for (const page of [fromSite.data, ledger.data]) {
        expect(page.items).toHaveLength(consume);
        const wrong = page.items.filter((i) => i.check && i.check.expected !== null && !i.check.ok);
        expect(wrong.map((i) => i.quota)).toEqual([victim.quota]);
        // The hubs round up on floats (ceil), the history's charges half away: one either way.
        const expected = wrong[0]?.check?.expected ?? NaN;
        if (family === "new-api") expect(expected).toBe(fair);
        else expect(Math.abs(expected - fair)).toBeLessThanOrEqual(1);
        expect(page.items.every((i) => i.check !== null && i.check.expected !== null)).toBe(true);
      }
    },
  );

  it("says an entry cannot be checked when its family logs no ratios, never a guess", async () => {
    const { site, id } = await siteWithOvercharge("one-api");
    const api = callerFor(store.db, bearer((await signInWith(store.db, id, site.user)).token)).api;
    const page = await api.account.logs({ type: "consume", pageSize: 5 });
    if (!page.success) throw new Error(page.message);
    for (const item of page.data.items)
      expect(item.check).toEqual({ expected: null, reason: "日志没有记录倍率，无法核对" });
  });
});
