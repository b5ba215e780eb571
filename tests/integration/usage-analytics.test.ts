import { describe, expect, it } from "vitest";
import { addDays, dayIn, offsetAt } from "../../src/server/core/time";
import { siteRegistry } from "../../src/server/sites/registry";
import type { StandInFamily, StandInLog } from "../../src/demo/gateway";
import { bearer, callerFor, expectBadParam } from "../support/caller";
import { signInAndSync } from "../support/ledger";
import { type TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";

/**
 * The ledger's analytics against the truth of the stand-in's log: every group, every day of the
 * range in the asked time zone (across a daylight-saving change), USD by each site's own unit, and
 * every account of a browser at once.
 */

let store: TempDb;
const open: FamilySite[] = [];
const NOW = Math.floor(Date.now() / 1000);
const QUOTA_PER_USD = 500_000;

freshStorePerTest((s) => (store = s), open);

/** A site of the family with 40 days of history, a user signed in (adding to `cookie`), its ledger synced. */
async function synced(family: StandInFamily, index: number, cookie = "") {
  const site = await startFamilySite(family, index, {}, { days: 40, now: NOW - 60, callsPerDay: 200 });
  open.push(site);
  const { id } = await siteRegistry(store.db).add({ name: `站点 ${family}`, url: site.gateway.url });
  const signed = await signInAndSync(store.db, id, site.user, NOW, cookie);
  return { site, token: signed.token, cookie: signed.cookie, logs: site.history.logs };
}

const consume = (logs: StandInLog[]) => logs.filter((l) => l.type === 2);
const usd = (quota: number) => Math.round((quota / QUOTA_PER_USD) * 1e6) / 1e6;

function by<K extends string>(logs: StandInLog[], key: (l: StandInLog) => K) {
  const out = new Map<K, { requests: number; quota: number; promptTokens: number; completionTokens: number }>();
  for (const l of logs) {
    const k = key(l);
    const row = out.get(k) ?? { requests: 0, quota: 0, promptTokens: 0, completionTokens: 0 };
    row.requests++;
    row.quota += l.quota;
    row.promptTokens += l.promptTokens;
    row.completionTokens += l.completionTokens;
    out.set(k, row);
  }
  return out;
}

describe("usage.summary", () => {
  it.each(["Asia/Shanghai", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu"])(
    "sums every day of the range in %s, and by model, token and type, as the log's truth",
    async (tz) => {
      const a = await synced("new-api", 0);
      const { api } = callerFor(store.db, bearer(a.token));
      const to = dayIn(tz, NOW * 1000);
      const from = addDays(to, -34);
      const inRange = a.logs.filter((l) => {
        const day = dayIn(tz, l.createdAt * 1000);
        return day >= from && day <= to;
      });

      const days = await api.usage.summary({ from, to, tz, groupBy: "day", split: "model" });
      expect(days.data.rows).toHaveLength(35);
      // Without the split: the same days (the edges of a zone off the hour grouped by hour alone).
      const plain = await api.usage.summary({ from, to, tz, groupBy: "day" });
      const strip = (rows: typeof days.data.rows) => rows.map((row) => ({ ...row, split: undefined }));
      expect(strip(plain.data.rows)).toEqual(strip(days.data.rows));
      const truthByDay = by(consume(inRange), (l) => dayIn(tz, l.createdAt * 1000));
      for (const row of days.data.rows) {
        const t = truthByDay.get(row.key) ?? { requests: 0, quota: 0, promptTokens: 0, completionTokens: 0 };
        expect({ ...row, split: undefined }, row.key).toEqual({
          key: row.key,
          ...t,
          usd: usd(t.quota),
          split: undefined,
        });
        const models = by(
          consume(inRange).filter((l) => dayIn(tz, l.createdAt * 1000) === row.key),
          (l) => l.model,
        );
        expect(row.split, row.key).toEqual(Object.fromEntries([...models].map(([m, s]) => [m, usd(s.quota)])));
      }
      const all = consume(inRange);
      expect(days.data.totals).toEqual({
        requests: all.length,
        quota: all.reduce((s, l) => s + l.quota, 0),
        usd: usd(all.reduce((s, l) => s + l.quota, 0)),
        promptTokens: all.reduce((s, l) => s + l.promptTokens, 0),
        completionTokens: all.reduce((s, l) => s + l.completionTokens, 0),
      });

      for (const [groupBy, key, logs] of [
        ["model", (l: StandInLog) => l.model, consume(inRange)],
        ["token", (l: StandInLog) => l.tokenName, consume(inRange)],
        [
          "type",
          (l: StandInLog) =>
            ({ 1: "topup", 2: "consume", 3: "manage", 4: "system", 5: "error", 6: "refund" })[l.type] ?? "other",
          inRange,
        ],
      ] as const) {
        const answer = await api.usage.summary({ from, to, tz, groupBy });
        const truth = by(logs, key);
        expect(Object.fromEntries(answer.data.rows.map(({ key: k, ...rest }) => [k, rest])), groupBy).toEqual(
          Object.fromEntries([...truth].map(([k, t]) => [k, { ...t, usd: usd(t.quota) }])),
        );
        // Largest spend first.
        const spend = answer.data.rows.map((r) => r.usd);
        expect(spend).toEqual([...spend].sort((x, y) => y - x));
      }
      expect(days.data.accounts.map((x) => [x.userId, typeof x.syncedAt, typeof x.oldest])).toEqual([
        [a.site.user.id, "string", "string"],
      ]);
    },
  );

  it("reads every account of the browser with accounts=all, each in its site's unit; Bearer reads its own only", async () => {
    const first = await synced("new-api", 0);
    const second = await synced("one-hub", 1, first.cookie);
    // The second site counts 1,000,000 quota to the dollar.
    await store.db.site.updateMany({ where: { url: second.site.gateway.url }, data: { quotaPerUnit: 1_000_000 } });
    const { api } = callerFor(store.db, { cookie: second.cookie });
    const range = { from: dayIn("UTC", (NOW - 20 * 86_400) * 1000), to: dayIn("UTC", NOW * 1000), tz: "UTC" };
    const inRange = (logs: StandInLog[]) =>
      consume(logs).filter((l) => {
        const day = dayIn("UTC", l.createdAt * 1000);
        return day >= range.from && day <= range.to;
      });
    const quota = (logs: StandInLog[]) => inRange(logs).reduce((s, l) => s + l.quota, 0);
    const all = await api.usage.summary({ ...range, groupBy: "model", accounts: "all" });
    expect(all.data.accounts.map((x) => x.userId).sort()).toEqual([first.site.user.id, second.site.user.id].sort());
    expect(all.data.totals.quota).toBe(quota(first.logs) + quota(second.logs));
    expect(all.data.totals.usd).toBeCloseTo(quota(first.logs) / 500_000 + quota(second.logs) / 1_000_000, 5);
    const active = await api.usage.summary({ ...range, groupBy: "model" });
    expect(active.data.totals.quota).toBe(quota(second.logs));
    const viaBearer = await callerFor(store.db, bearer(first.token)).api.usage.summary({ ...range, accounts: "all" });
    expect(viaBearer.data.accounts.map((x) => x.userId)).toEqual([first.site.user.id]);
  });

  it.each(["Asia/Shanghai", "Asia/Kolkata", "America/New_York"])(
    "groups by the hours of %s's clock, every hour a row, as the log's truth",
    async (tz) => {
      const a = await synced("new-api", 0);
      const { api } = callerFor(store.db, bearer(a.token));
      const to = dayIn(tz, NOW * 1000);
      const from = addDays(to, -2);
      const hours = await api.usage.summary({ from, to, tz, groupBy: "hour", split: "model" });
      const hourOf = (at: number) => {
        const local = new Date(at * 1000 + offsetAt(tz, at * 1000)).toISOString();
        return `${local.slice(0, 10)} ${local.slice(11, 13)}:00`;
      };
      const inRange = consume(a.logs).filter((l) => {
        const day = dayIn(tz, l.createdAt * 1000);
        return day >= from && day <= to;
      });
      const truth = by(inRange, (l) => hourOf(l.createdAt));
      expect(hours.data.rows.length).toBeGreaterThanOrEqual(3 * 24 - 1);
      expect(hours.data.rows[0]?.key).toBe(`${from} 00:00`);
      expect(hours.data.rows.map((r) => r.key)).toEqual([...hours.data.rows.map((r) => r.key)].sort());
      for (const row of hours.data.rows) {
        const t = truth.get(row.key) ?? { requests: 0, quota: 0, promptTokens: 0, completionTokens: 0 };
        expect({ requests: row.requests, quota: row.quota }, row.key).toEqual({ requests: t.requests, quota: t.quota });
      }
      const days = await api.usage.summary({ from, to, tz, groupBy: "day" });
      expect(hours.data.totals).toEqual(days.data.totals);
    },
  );

  it.each([
    [{ from: "2026-13-01" }, "from"],
    [{ from: "2026-02-30" }, "from"],
    [{ to: "yesterday" }, "to"],
    [{ from: "2026-05-02", to: "2026-05-01" }, "to"],
    [{ from: "2020-01-01", to: "2026-01-01" }, "to"],
    [{ groupBy: "minute" }, "groupBy"],
    [{ groupBy: "hour" }, "groupBy"], // 30 days by default: more than a week of hours
    [{ accounts: "some" }, "accounts"],
    [{ tz: "Mars/Olympus" }, "tz"],
    [{ split: "token" }, "split"],
  ])("answers a bad parameter %j with its name", async (input, param) => {
    const a = await synced("new-api", 0);
    const { api } = callerFor(store.db, bearer(a.token));
    await expectBadParam(api.usage.summary(input as never), param);
    if (param !== "groupBy" && param !== "split") await expectBadParam(api.usage.balance(input as never), param);
  });
});

describe("usage.balance", () => {
  it("gives the balance each sync noted, the burn rate of the last 7 days and the days it lasts", async () => {
    const a = await synced("new-api", 0);
    const { api } = callerFor(store.db, bearer(a.token));
    const answer = await api.usage.balance({ tz: "UTC" });
    const [account] = answer.data.accounts;
    const balance = a.site.history.totals.quota;
    expect(account?.series).toEqual([
      {
        day: dayIn("UTC", NOW * 1000),
        at: new Date(NOW * 1000).toISOString(),
        quota: balance,
        usd: usd(balance),
        // One snapshot on the day: nothing to reconcile it against.
        unmatchedUsd: null,
      },
    ]);
    // The last 7 × 24 whole hours, the current one included.
    const now = Math.floor(Date.now() / 1000);
    const weekStart = now - (now % 3600) + 3600 - 7 * 86_400;
    const week = consume(a.logs).filter((l) => l.createdAt >= weekStart);
    const burn = usd(week.reduce((s, l) => s + l.quota, 0)) / 7;
    expect(account?.burnRateUsd).toBeCloseTo(burn, 5);
    expect(account?.balanceUsd).toBe(usd(balance));
    expect(account?.daysLeft).toBeCloseTo(usd(balance) / burn, 0);
    expect(answer.data.totals).toEqual({
      balanceUsd: usd(balance),
      burnRateUsd: account?.burnRateUsd,
      daysLeft: account?.daysLeft,
    });
  });
});
