import { describe, expect, it } from "vitest";
import { dayIn, dayStart, nextDay } from "../../src/server/core/time";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor, expectBadParam } from "../support/caller";
import { signInAndSync } from "../support/ledger";
import { type TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";

/**
 * The one date format of every ranged endpoint (api/schemas/range.ts): calendar days in `tz`,
 * Unix seconds as an alias, bad values, reversed and too-long ranges named, and whole local days
 * in a +05:30 zone, with entries on both sides of each edge.
 */

let store: TempDb;
const open: FamilySite[] = [];
const NOW = Math.floor(Date.now() / 1000);
const KOLKATA = "Asia/Kolkata";
/** A Kolkata day two days back, and its first and last seconds. */
const DAY = dayIn(KOLKATA, (NOW - 2 * 86_400) * 1000);
const START = dayStart(KOLKATA, DAY) / 1000;
const END = dayStart(KOLKATA, nextDay(DAY)) / 1000;
const EDGE_MODEL = "edge-model";

freshStorePerTest((s) => (store = s), open);

/** An account whose site has four entries of EDGE_MODEL: one second before the day, its first and last seconds, one after. */
async function edgeAccount() {
  const site = await startFamilySite("new-api", 0, {}, { days: 5, now: NOW - 120, callsPerDay: 40 });
  open.push(site);
  const base = site.history.logs.find((l) => l.type === 2)!;
  for (const at of [START - 1, START, END - 1, END]) {
    site.history.logs.push({ ...base, createdAt: at, model: EDGE_MODEL, quota: 1000 });
  }
  site.history.logs.sort((a, b) => a.createdAt - b.createdAt);
  const { id } = await siteRegistry(store.db).add({ name: "日期站点", url: site.gateway.url });
  const { token } = await signInAndSync(store.db, id, site.user, NOW);
  return callerFor(store.db, bearer(token)).api;
}

type Api = Awaited<ReturnType<typeof edgeAccount>>;
type RangeParams = { from?: string | number; to?: string | number; tz?: string };

/** How many EDGE_MODEL entries each endpoint sees in a range. */
const ENDPOINTS: Array<[string, (api: Api, r: RangeParams) => Promise<number>]> = [
  [
    "account.logs",
    async (api, r) => {
      const answer = await api.account.logs({ ...r, model: EDGE_MODEL, pageSize: 100 });
      if (!answer.success) throw new Error(answer.message);
      return answer.data.items.length;
    },
  ],
  [
    "usage.summary",
    async (api, r) => {
      const answer = await api.usage.summary({ ...r, groupBy: "model" });
      return answer.data.rows.find((row) => row.key === EDGE_MODEL)?.requests ?? 0;
    },
  ],
  ["export.count", async (api, r) => (await api.export.count({ ...r, model: EDGE_MODEL })).data.rows],
  [
    "export.usageCsv",
    async (api, r) => {
      const answer = await api.export.usageCsv({ ...r, model: EDGE_MODEL });
      const text = await new Response(answer.data.body as BodyInit).text();
      return text.trim().split("\r\n").length - 1;
    },
  ],
];

describe("the range parameters", () => {
  it.each(ENDPOINTS)("%s reads whole local days in a +05:30 zone, with Unix seconds as an alias", async (_, seen) => {
    const api = await edgeAccount();
    expect(await seen(api, { from: DAY, to: DAY, tz: KOLKATA })).toBe(2);
    expect(await seen(api, { from: String(START), to: String(END - 1), tz: KOLKATA })).toBe(2);
    expect(await seen(api, { from: START, to: END, tz: KOLKATA })).toBe(3);
    // The same day in UTC starts and ends 5.5 hours later: the day's last second and the one after.
    expect(await seen(api, { from: DAY, to: DAY })).toBe(2);
    expect(await seen(api, { from: DAY, to: DAY, tz: "UTC" })).toBe(2);
  });

  it("names the bad parameter on every ranged endpoint", async () => {
    const api = await edgeAccount();
    const calls: Array<(input: RangeParams) => Promise<unknown>> = [
      (i) => api.account.logs(i),
      (i) => api.usage.summary(i),
      (i) => api.usage.balance(i),
      (i) => api.export.count(i),
      (i) => api.export.usageCsv(i),
    ];
    for (const call of calls) {
      await expectBadParam(call({ from: "2026-13-01" }), "from");
      await expectBadParam(call({ from: "2026-11-01T10:00:00" }), "from");
      await expectBadParam(call({ to: "yesterday" }), "to");
      await expectBadParam(call({ from: "2026-05-02", to: "2026-05-01" }), "to");
      await expectBadParam(call({ from: 1_780_000_000, to: 1_770_000_000 }), "to");
      await expectBadParam(call({ from: "2024-01-01", to: "2026-04-01" }), "to");
      await expectBadParam(call({ from: "2026-01-01", tz: "Mars/Olympus" }), "tz");
      // 800 calendar days is the longest range, on every endpoint.
      await expect(call({ from: "2024-01-01", to: "2026-03-10" })).resolves.toMatchObject({ success: true });
    }
  });

  it("answers the days it read, in the zone asked", async () => {
    const api = await edgeAccount();
    const summary = await api.usage.summary({ from: START, to: END - 1, tz: KOLKATA });
    expect([summary.data.from, summary.data.to, summary.data.tz]).toEqual([DAY, DAY, KOLKATA]);
    const balance = await api.usage.balance({ from: DAY, to: DAY });
    expect([balance.data.from, balance.data.to, balance.data.tz]).toEqual([DAY, DAY, "UTC"]);
    const count = await api.export.count({ from: START, tz: KOLKATA });
    expect([count.data.from, count.data.to]).toEqual([DAY, dayIn(KOLKATA, Date.now())]);
  });
});
