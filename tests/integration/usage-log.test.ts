import { describe, expect, it } from "vitest";
import { freshProcessState } from "../../src/server/core/process-state";
import { siteRegistry } from "../../src/server/sites/registry";
import type { StandInFamily, StandInLog } from "../../src/demo/gateway";
import { bearer, callerFor } from "../support/caller";
import { signInAndSync } from "../support/ledger";
import { type TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";

/**
 * 使用日志 from the ledger: filters matched as parts of names whatever their case, the totals of
 * the whole filtered range, what the site logged since the last sync put first, each entry's
 * ratios kept; the site's own exact match for what the ledger does not hold.
 */

let store: TempDb;
const open: FamilySite[] = [];
const NOW = Math.floor(Date.now() / 1000) - 600;
const QUOTA_PER_USD = 500_000;

freshStorePerTest((s) => (store = s), open);

async function synced(family: StandInFamily = "new-api") {
  const site = await startFamilySite(family, 0, {}, { days: 20, now: NOW - 60, callsPerDay: 60 });
  open.push(site);
  const { id } = await siteRegistry(store.db).add({ name: `站点 ${family}`, url: site.gateway.url });
  const { token } = await signInAndSync(store.db, id, site.user, NOW);
  return { site, api: callerFor(store.db, bearer(token)).api, logs: site.history.logs };
}

const newestFirst = (logs: StandInLog[]) => [...logs].sort((a, b) => b.createdAt - a.createdAt);
const seconds = (items: Array<{ createdAt: string | null }>) => items.map((i) => Date.parse(i.createdAt ?? "") / 1000);

function expectedTotals(logs: StandInLog[]) {
  const consume = logs.filter((l) => l.type === 2);
  const quota = consume.reduce((s, l) => s + l.quota, 0);
  return {
    entries: logs.length,
    requests: consume.length,
    quota,
    usd: Math.round((quota / QUOTA_PER_USD) * 1e6) / 1e6,
    promptTokens: consume.reduce((s, l) => s + l.promptTokens, 0),
    completionTokens: consume.reduce((s, l) => s + l.completionTokens, 0),
  };
}

describe("account.logs from the ledger", () => {
  it("matches model and token as parts of the names, whatever their case, with the totals of the whole range", async () => {
    const { api, logs } = await synced();
    const claude = newestFirst(logs.filter((l) => l.model.includes("claude")));
    expect(claude.length).toBeGreaterThan(40);

    const page = await api.account.logs({ model: "CLAUDE", page: 2, pageSize: 20 });
    if (!page.success) throw new Error(page.message);
    expect(page.data).toMatchObject({ source: "ledger", match: "contains", total: claude.length, hasMore: true });
    expect(page.data.ledger?.recent).toBe("included");
    expect(page.data.items.every((i) => i.model === "claude-sonnet-4")).toBe(true);
    expect(seconds(page.data.items)).toEqual(claude.slice(20, 40).map((l) => l.createdAt));
    expect(page.data.totals).toEqual(expectedTotals(claude));

    // A part of a token name, and a type with a part of a model shared by two.
    const server = await api.account.logs({ token: "生产", type: "consume", model: "4O" });
    if (!server.success) throw new Error(server.message);
    const truth = logs.filter((l) => l.type === 2 && l.tokenName === "生产服务器" && l.model.includes("4o"));
    expect(new Set(truth.map((l) => l.model))).toEqual(new Set(["gpt-4o", "gpt-4o-mini"]));
    expect(server.data.totals).toEqual(expectedTotals(truth));

    // The pickers: the names the ledger knows, most used first.
    const names = await api.account.logNames();
    expect(names.models).toContain("claude-sonnet-4");
    expect(names.models[0]).toBe("gpt-4o-mini");
    expect(new Set(names.tokens)).toEqual(new Set(logs.filter((l) => l.tokenName).map((l) => l.tokenName)));
  });

  it("puts what the site logged since the last sync before the ledger's entries, and pages across the two", async () => {
    const { api, logs, site } = await synced();
    const fresh: StandInLog[] = Array.from({ length: 7 }, (_, i) => ({
      createdAt: NOW + 1 + i * 10,
      type: 2,
      model: i % 2 ? "Claude-Opus-4" : "gpt-4o",
      tokenName: "笔记本",
      tokenId: 1,
      quota: 1000 + i,
      promptTokens: 100,
      completionTokens: 10,
      durationMs: 1000,
      stream: false,
      content: "",
    }));
    logs.push(...fresh);
    const truth = newestFirst(logs);

    const first = await api.account.logs({ page: 1, pageSize: 5 });
    const second = await api.account.logs({ page: 2, pageSize: 5 });
    if (!first.success || !second.success) throw new Error("logs failed");
    expect(seconds(first.data.items)).toEqual(truth.slice(0, 5).map((l) => l.createdAt));
    expect(seconds(second.data.items)).toEqual(truth.slice(5, 10).map((l) => l.createdAt));
    expect(first.data.total).toBe(logs.length);
    expect(first.data.totals).toEqual(expectedTotals(logs));

    const opus = await api.account.logs({ model: "opus" });
    if (!opus.success) throw new Error(opus.message);
    expect(opus.data.total).toBe(3);
    expect(opus.data.items.map((i) => i.model)).toEqual(["Claude-Opus-4", "Claude-Opus-4", "Claude-Opus-4"]);

    // The site goes away: the ledger still answers, saying the newest part is missing and why.
    await site.gateway.close();
    freshProcessState();
    const down = await api.account.logs({ page: 1, pageSize: 5 });
    if (!down.success) throw new Error(down.message);
    expect(down.data.ledger?.recent).toBe("failed");
    expect(down.data.ledger?.reason).toMatch(/^无法连接站点|^站点/);
    expect(down.data.total).toBe(logs.length - fresh.length);
    expect(seconds(down.data.items)).toEqual(
      truth
        .filter((l) => l.createdAt <= NOW)
        .slice(0, 5)
        .map((l) => l.createdAt),
    );
  });

  it("reads the site, with its exact match, for a range that starts before the ledger", async () => {
    const { api, logs } = await synced();
    const from = NOW - 60 * 86_400;
    const part = await api.account.logs({ from, model: "claude" });
    if (!part.success) throw new Error(part.message);
    expect(part.data).toMatchObject({ source: "site", match: "exact", totals: null, ledger: null, total: 0 });
    const exact = await api.account.logs({ from, model: "claude-sonnet-4" });
    if (!exact.success) throw new Error(exact.message);
    expect(exact.data.total).toBe(logs.filter((l) => l.model === "claude-sonnet-4").length);
    // A range the ledger holds: from the ledger.
    const held = await api.account.logs({ from: NOW - 3 * 86_400, to: NOW - 86_400 });
    expect(held.success && held.data.source).toBe("ledger");
    expect(held.success && held.data.ledger?.recent).toBe("none");
    expect(held.success && held.data.totals).toEqual(
      expectedTotals(logs.filter((l) => l.createdAt >= NOW - 3 * 86_400 && l.createdAt <= NOW - 86_400)),
    );
  });

  const detailOf: Record<"new-api" | "one-hub", (r: { model: number; completion: number }) => object> = {
    "new-api": (r) => ({
      model_ratio: r.model,
      completion_ratio: r.completion,
      group_ratio: 1,
      frt: 612,
      group: "default",
    }),
    "one-hub": (r) => ({ input_ratio: r.model, output_ratio: r.model * r.completion, group_name: "default" }),
  };

  it.each(["new-api", "one-hub"] as const)(
    "keeps each %s entry's ratios and serves them back from the ledger",
    async (family) => {
      const { api, site, logs } = await synced(family);
      const newest = newestFirst(logs.filter((l) => l.type === 2))[0]!;
      const expected = detailOf[family](newest.ratios!);
      const live = await api.account.logs({ from: NOW - 60 * 86_400, type: "consume", pageSize: 20 });
      if (!live.success) throw new Error(live.message);
      expect(live.data.source).toBe("site");
      expect(live.data.items[0]?.detail).toMatchObject(expected);
      await site.gateway.close();
      freshProcessState();
      const stored = await api.account.logs({ type: "consume", pageSize: 20 });
      if (!stored.success) throw new Error(stored.message);
      expect(stored.data.source).toBe("ledger");
      expect(stored.data.items.every((i) => Object.keys(i.detail).length > 0)).toBe(true);
      expect(stored.data.items[0]?.detail).toMatchObject(expected);
    },
  );
});
