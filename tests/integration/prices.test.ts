import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  newApiUser,
  startGateway,
  type GatewayOptions,
  type GatewayUser,
  type RunningGateway,
  type StandInLog,
} from "../../src/demo/gateway";
import { accountOf } from "../../src/server/accounts/overview";
import { liveRequest, yieldToLive } from "../../src/server/core/live-load";
import { freshProcessState } from "../../src/server/core/process-state";
import { syncLedger } from "../../src/server/ledger/sync";
import { readDuePrices } from "../../src/server/jobs/prices";
import { syncDueLedgers } from "../../src/server/jobs/ledger";
import { evaluateAlerts } from "../../src/server/jobs/alerts";
import { riseOf } from "../../src/server/prices/changes";
import { readSitePrices } from "../../src/server/prices/read";
import { priceStore } from "../../src/server/prices/store";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor, cookieFrom, signInWith } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * Prices across three sites of three families, each with a known list: a new-api publishing ratios
 * (the account in group vip at 0.9), a one-hub at 1,000,000 quota units a dollar (group default at
 * 1.2), and a one-api publishing none (its price fitted from the account's own calls). Every figure
 * below is worked out by hand from gateway-actions.md's formulas.
 */

// price_changed's webhook below points at loopback: the operator's switch for private targets is on.
process.env.ALERT_ALLOW_PRIVATE = "1";
// The reads queue behind the other background work from the first live request on (no held stretch).
process.env.LIVE_FIRST_SECONDS = "0";

const NOW = Math.floor(Date.now() / 1000);

/** A one-api call billed as one-api bills it: ceil((prompt + completion × 4) × 0.075 × 1.5). */
const oneApiCall = (at: number, prompt: number, completion: number): StandInLog => ({
  createdAt: at,
  type: 2,
  model: "gpt-4o-mini",
  tokenName: "默认",
  tokenId: 1,
  quota: Math.ceil((prompt + completion * 4) * 0.075 * 1.5),
  promptTokens: prompt,
  completionTokens: completion,
  durationMs: 500,
  stream: false,
  content: "倍率：0.08 × 1.50 × 4.00",
});

/** A new-api call of gpt-4o-mini at group vip: (prompt + completion × 4) × 0.075 × 0.9 quota. */
const newApiCall = (at: number, prompt: number, completion: number): StandInLog => ({
  createdAt: at,
  type: 2,
  model: "gpt-4o-mini",
  tokenName: "默认",
  tokenId: 1,
  quota: Math.round((prompt + completion * 4) * 0.075 * 0.9),
  promptTokens: prompt,
  completionTokens: completion,
  durationMs: 500,
  stream: false,
  content: "",
});

const NEW_API_PRICING: GatewayOptions["pricing"] = {
  data: [
    {
      model_name: "gpt-4o-mini",
      quota_type: 0,
      model_ratio: 0.075,
      completion_ratio: 4,
      enable_groups: ["default", "vip"],
    },
    { model_name: "claude-sonnet-4", quota_type: 0, model_ratio: 1.5, completion_ratio: 5, enable_groups: ["vip"] },
    {
      model_name: "dall-e-3",
      quota_type: 1,
      model_ratio: 0,
      model_price: 0.04,
      completion_ratio: 0,
      enable_groups: ["vip"],
    },
  ],
  groupRatios: { default: 1, vip: 0.9 },
};

const users: Record<string, GatewayUser> = {
  newApi: {
    accessToken: "sk-prices-newapi-0123456789ab",
    data: newApiUser(11, { username: "np", display_name: "新站号", group: "vip" }),
    models: ["claude-sonnet-4", "dall-e-3", "gpt-4o-mini"],
    logs: [newApiCall(NOW - 7200, 1000, 500), newApiCall(NOW - 3600, 3000, 200)],
  },
  hub: {
    accessToken: "sk-prices-onehub-0123456789ab",
    data: newApiUser(12, { username: "hub", display_name: "中转号", group: "default" }),
    models: ["gpt-4o-mini"],
    logs: [],
  },
  oneApi: {
    accessToken: "sk-prices-oneapi-0123456789ab",
    data: newApiUser(13, { username: "oa", display_name: "老站号", group: "svip" }),
    models: ["gpt-4o-mini"],
    logs: [
      oneApiCall(NOW - 9000, 1200, 300),
      oneApiCall(NOW - 8000, 5000, 800),
      oneApiCall(NOW - 7000, 300, 1200),
      oneApiCall(NOW - 6000, 8000, 100),
      oneApiCall(NOW - 5000, 2500, 2500),
    ],
  },
};

let store: TempDb;
const sites: RunningGateway[] = [];
let api: ReturnType<typeof callerFor>["api"];
const pricing = structuredClone(NEW_API_PRICING);

beforeAll(async () => {
  store = await tempStore();
  freshProcessState();
  sites.push(
    await startGateway({ family: "new-api", users: [users.newApi!], pricing }),
    await startGateway({
      family: "one-hub",
      users: [users.hub!],
      status: { quota_per_unit: 1_000_000 },
      pricing: {
        data: [
          { model: "gpt-4o-mini", type: "tokens", channel_type: 1, input: 0.05, output: 0.2, locked: false },
          { model: "dall-e-3", type: "times", channel_type: 1, input: 30, output: 30, locked: false },
        ],
        groupRatios: { default: 1.2 },
      },
    }),
    await startGateway({ family: "one-api", users: [users.oneApi!] }),
  );
  const registry = siteRegistry(store.db);
  const names = ["新站", "中转站", "老站"];
  const ids = [];
  for (const [i, s] of sites.entries()) ids.push((await registry.add({ name: names[i]!, url: s.url })).id);
  const { api: anon } = callerFor(store.db, {}, { clientAddress: "198.51.100.21" });
  const registered = await anon.workspace.register({ name: "价格工作区", password: "correct horse battery" });
  api = callerFor(store.db, bearer(registered.data.token), { ledgerSyncMinutes: 0 }).api;
  for (const [i, user] of [users.newApi!, users.hub!, users.oneApi!].entries()) {
    const saved = await api.workspace.addAccount({
      siteId: ids[i]!,
      userId: Number(user.data.id),
      accessToken: user.accessToken,
    });
    if (!saved.success) throw new Error(saved.message);
    const row = await store.db.workspaceAccount.findFirst({
      where: { id: saved.data.account.id },
      select: { sessionId: true },
    });
    const session = await sessionStore(store.db).findLiveById(row?.sessionId ?? "", new Date());
    if (!session) throw new Error("no session");
    await syncLedger(
      store.db,
      accountOf(session),
      { db: store.db, timeoutMs: 5000, perMinute: 100_000 },
      {
        backfillDays: 2,
      },
    );
  }
});
afterAll(async () => {
  await Promise.all(sites.map((s) => s.close()));
  await store?.cleanup();
});

describe("prices.compare", () => {
  it("prices a model for each account's own group, fitted from the log where the site publishes none", async () => {
    const answer = await api.prices.compare({ model: "gpt-4o-mini" });
    const rows = answer.data.rows.map((r) => ({
      site: r.siteName,
      group: r.group,
      ratio: r.groupRatio,
      in: r.inputPerMillionUsd === null ? null : Math.round(r.inputPerMillionUsd * 1e4) / 1e4,
      out: r.outputPerMillionUsd === null ? null : Math.round(r.outputPerMillionUsd * 1e4) / 1e4,
      call: r.perCallUsd,
      logs: r.derivedFromLogs,
      usable: r.usable,
      cheapest: r.cheapest,
    }));
    expect(rows).toEqual([
      // one-hub: 0.05 and 0.2 quota a token at 1,000,000 a dollar, × 1.2.
      {
        site: "中转站",
        group: "default",
        ratio: 1.2,
        in: 0.06,
        out: 0.24,
        call: null,
        logs: false,
        usable: true,
        cheapest: true,
      },
      // new-api: 0.075 × 2 = $0.15 in, × 4 out, × 0.9 for vip.
      {
        site: "新站",
        group: "vip",
        ratio: 0.9,
        in: 0.135,
        out: 0.54,
        call: null,
        logs: false,
        usable: true,
        cheapest: false,
      },
      // one-api: 0.075 × 1.5 × 2 = $0.225 in, × 4 = $0.90 out, fitted from five calls (one-api's
      // ceil() of each call's quota adds a little: 0.9006).
      {
        site: "老站",
        group: "svip",
        ratio: null,
        in: 0.225,
        out: 0.9006,
        call: null,
        logs: true,
        usable: true,
        cheapest: false,
      },
    ]);
  });

  it("gives per-call prices, and leaves out the accounts that neither see nor price a model", async () => {
    const answer = await api.prices.compare({ model: "dall-e-3" });
    expect(answer.data.rows.map((r) => [r.siteName, r.perCallUsd, r.usable, r.cheapest])).toEqual([
      // new-api: $0.04 × 0.9.
      ["新站", 0.036, true, true],
      // one-hub: 1000 × 30 ÷ 1,000,000 × 1.2 = $0.036 a call too, but not among the account's models.
      ["中转站", 0.036, false, false],
    ]);
    expect((await api.prices.compare({ model: "no-such-model" })).data.rows).toEqual([]);
  });
});

describe("prices.whatif", () => {
  it("prices the range's usage of each model on every account that offers it", async () => {
    const answer = await api.prices.whatif({ tz: "UTC" });
    const mini = answer.data.rows.find((r) => r.model === "gpt-4o-mini");
    // Used: the new-api calls (4,000 + 5 × 0 …) and the one-api calls, summed.
    const prompt = 1000 + 3000 + 1200 + 5000 + 300 + 8000 + 2500;
    const completion = 500 + 200 + 300 + 800 + 1200 + 100 + 2500;
    expect(mini).toMatchObject({ promptTokens: prompt, completionTokens: completion });
    const at = (site: string) => mini?.elsewhere.find((e) => e.siteName === site)?.usd;
    // What was paid (each call's charge rounded to its unit), moved at the ratio of the prices.
    const near = (usd: number | undefined, exact: number) => expect(Math.abs(usd! / exact - 1)).toBeLessThan(0.002);
    near(at("中转站"), (prompt * 0.06 + completion * 0.24) / 1e6);
    near(at("新站"), (prompt * 0.135 + completion * 0.54) / 1e6);
    // Fitted from calls billed with ceil(): within 0.1 %.
    expect(Math.abs(at("老站")! / ((prompt * 0.225 + completion * 0.9) / 1e6) - 1)).toBeLessThan(0.001);
    expect(mini?.elsewhere.map((e) => e.siteName)).toEqual(["中转站", "新站", "老站"]);
    expect(answer.data.totals.cheapestUsd).toBeCloseTo(at("中转站")!, 6);
    expect(answer.data.totals.savingUsd).toBeCloseTo(answer.data.totals.actualUsd - at("中转站")!, 6);
  });
});

describe("prices.account", () => {
  it("gives the account's group and ratio, and for each model it used the cheapest other account", async () => {
    // The workspace's first account: the new-api one, group vip.
    const answer = await api.prices.account({ tz: "UTC" });
    expect(answer.data).toMatchObject({ siteName: "新站", group: "vip", groupRatio: 0.9, error: null });
    expect(answer.data.models).toEqual(["claude-sonnet-4", "dall-e-3", "gpt-4o-mini"]);
    const [mini] = answer.data.used;
    expect(mini).toMatchObject({
      model: "gpt-4o-mini",
      own: { inputPerMillionUsd: 0.135, outputPerMillionUsd: 0.54, perCallUsd: null, derivedFromLogs: false },
      cheapest: { siteName: "中转站", price: { inputPerMillionUsd: 0.06, outputPerMillionUsd: 0.24 } },
    });
    // Its 4,000 prompt and 700 completion tokens at the one-hub's prices: what it paid (each call
    // rounded to its unit) at the ratio of the two prices.
    expect(Math.abs(mini!.cheapest!.usd! / ((4000 * 0.06 + 700 * 0.24) / 1e6) - 1)).toBeLessThan(0.005);
  });
});

describe("the price job", () => {
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;

  it("reads each site's list and each account's side, then the lists each hour and the sides each day", async () => {
    const later = new Date(Date.now() + DAY + HOUR);
    const calls = () => sites.reduce((n, s) => n + s.requests.length, 0);
    const before = calls();
    expect(await readDuePrices(store.db, later)).toEqual({ sites: 3, accounts: 3 });
    expect(calls()).toBeGreaterThan(before);
    const after = calls();
    expect(await readDuePrices(store.db, new Date(later.getTime() + 60_000))).toEqual({ sites: 0, accounts: 0 });
    expect(calls()).toBe(after);
    // An hour on: the lists, not the sides.
    expect(await readDuePrices(store.db, new Date(later.getTime() + HOUR))).toEqual({ sites: 3, accounts: 0 });
  });

  it("takes the lists whose hour and the accounts whose day has come, due again an hour or a day after; one that must sign in again is left", async () => {
    const dueOf = async () =>
      new Map(
        (await store.db.workspaceAccount.findMany({ select: { siteUserId: true, pricesNext: true } })).map((r) => [
          Number(r.siteUserId),
          r.pricesNext?.getTime(),
        ]),
      );
    const listsDue = async () =>
      (await store.db.sitePriceRead.findMany({ select: { nextAt: true } })).map((r) => r.nextAt?.getTime());
    const at = Date.now() + 3 * DAY;
    // 老站's account must sign in again: no read of it nor through it (its site has no other), and its due time stays.
    await store.db.workspaceAccount.updateMany({ where: { siteUserId: 13n }, data: { state: "reauth" } });
    const before = await dueOf();
    const oneApiCalls = sites[2]!.requests.length;
    try {
      expect(await readDuePrices(store.db, new Date(at))).toEqual({ sites: 2, accounts: 2 });
      const due = await dueOf();
      expect(due.get(11)).toBe(at + DAY);
      expect(due.get(12)).toBe(at + DAY);
      expect(due.get(13)).toBe(before.get(13));
      expect(sites[2]!.requests.length).toBe(oneApiCalls);
      // Each list taken, read or not, is due an hour on.
      expect(await listsDue()).toEqual([at + HOUR, at + HOUR, at + HOUR]);
      // Half an hour on: nothing has come.
      expect(await readDuePrices(store.db, new Date(at + HOUR / 2))).toEqual({ sites: 0, accounts: 0 });
      expect(await dueOf()).toEqual(due);
    } finally {
      await store.db.workspaceAccount.updateMany({ where: { siteUserId: 13n }, data: { state: "ok" } });
    }
    // Back to working: its list (due with the others) and its side (due since its last day) at the next pass.
    expect(await readDuePrices(store.db, new Date(at + HOUR + 60_000))).toEqual({ sites: 3, accounts: 1 });
    expect(sites[2]!.requests.length).toBeGreaterThan(oneApiCalls);
  });

  it("follows a group the site changed at the account's next sync: its ratio at once, its side read at the next pass", async () => {
    const siteId = (await siteRegistry(store.db).list()).find((s) => s.name === "新站")!.id;
    const owner = { siteId, siteUserId: 11 };
    const sideOf = async () => (await priceStore(store.db).accounts([owner])).get(`${siteId}:11`);
    expect(await sideOf()).toMatchObject({ group: "vip", groupRatio: 0.9 });
    const user = users.newApi!.data;
    user.group = "default";
    try {
      const job = { syncMinutes: 10, keepDays: 400, backfillDays: 2, perMinute: 100_000, timeoutMs: 5000 };
      const synced = Date.now();
      // A look past the interval since their first syncs.
      expect(await syncDueLedgers(store.db, job, synced + 11 * 60_000)).toBe(3);
      // The site's ratio of the new group, and no usable models until the side is read again.
      expect(await sideOf()).toMatchObject({ group: "default", groupRatio: 1, models: [] });
      const due = await store.db.workspaceAccount.findFirst({
        where: { siteUserId: 11n },
        select: { pricesNext: true },
      });
      expect(due?.pricesNext?.getTime()).toBeGreaterThanOrEqual(synced);
      expect(due?.pricesNext?.getTime()).toBeLessThanOrEqual(Date.now());
      // The others' groups are as they were: nothing for them to read.
      expect(await readDuePrices(store.db, new Date(Date.now() + 1000))).toEqual({ sites: 0, accounts: 1 });
      expect(await sideOf()).toMatchObject({ group: "default", groupRatio: 1, models: users.newApi!.models });
    } finally {
      user.group = "vip";
    }
  });

  it("runs on every instance at once, each pass claiming its own batches: every list and side read once", async () => {
    const at = new Date(Date.now() + 5 * DAY);
    const calls = () => sites.reduce((n, s) => n + s.requests.length, 0);
    const before = calls();
    const passes = await Promise.all([readDuePrices(store.db, at), readDuePrices(store.db, at)]);
    expect(passes.reduce((n, p) => n + p.sites, 0)).toBe(3);
    expect(passes.reduce((n, p) => n + p.accounts, 0)).toBe(3);
    const read = calls() - before;
    // The same again, one pass alone: as many calls as the two together made.
    const later = new Date(at.getTime() + 2 * DAY);
    expect(await readDuePrices(store.db, later)).toEqual({ sites: 3, accounts: 3 });
    expect(calls() - before - read).toBe(read);
  });

  it("gives live requests their turn before each read, behind the process's other background work", async () => {
    const at = new Date(Date.now() + 9 * DAY);
    const calls = () => sites.reduce((n, s) => n + s.requests.length, 0);
    const before = calls();
    const answered = liveRequest();
    try {
      // Four seconds of other background work already waiting their turns: the reads queue behind them.
      const others = Promise.all([0, 1, 2, 3].map(() => yieldToLive(250)));
      const pass = readDuePrices(store.db, at);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(calls()).toBe(before);
      answered();
      // Nobody served any more: every wait ends, and the pass reads what was due.
      expect(await pass).toEqual({ sites: 3, accounts: 3 });
      await others;
      expect(calls()).toBeGreaterThan(before);
    } finally {
      answered();
    }
  });
});

describe("price history", () => {
  it("keeps a change once, with its time; the same list again writes nothing", async () => {
    const row = await store.db.workspaceAccount.findFirst({ where: { siteUserId: 11n }, select: { sessionId: true } });
    const session = await sessionStore(store.db).findLiveById(row?.sessionId ?? "", new Date());
    const account = accountOf(session!);
    const deps = { db: store.db, timeoutMs: 5000, perMinute: 100_000 };
    expect(await readSitePrices(store.db, account, deps)).toEqual({ changes: 0, published: true });
    pricing.data[0]!.model_ratio = 0.1;
    const at = new Date(Date.now() + 3_600_000);
    expect(await readSitePrices(store.db, account, deps, at)).toEqual({ changes: 1, published: true });
    expect(await readSitePrices(store.db, account, deps, at)).toEqual({ changes: 0, published: true });
    const history = await priceStore(store.db).histories([session!.siteId], ["gpt-4o-mini"]);
    expect(history.map((h) => [h.inputPerM, h.outputPerM])).toEqual([
      [0.15, 0.6],
      [0.2, 0.8],
    ]);
    expect(history[1]?.at.toISOString()).toBe(at.toISOString());
  });
});

describe("price_changed", () => {
  it("tells of a rise of a model the account used, not of one it did not, nor of a fall; ends without a message", async () => {
    // After "price history" above: gpt-4o-mini on 新站 went from 0.075 to 0.1 an hour from now (+33.3%).
    const channel = await api.alerts.createChannel({ type: "webhook", name: "价格钩子", url: "http://127.0.0.1:9/p" });
    if (!channel.success) throw new Error(channel.message);
    for (const r of (await api.alerts.rules()).data.rules) await api.alerts.removeRule({ id: r.id });
    const strict = await api.alerts.createRule({ kind: "price_changed", account: "all", threshold: 50 });
    const rule = await api.alerts.createRule({
      kind: "price_changed",
      account: "all",
      threshold: 30,
      channels: [channel.data.channel.id],
    });
    if (!rule.success || !strict.success) throw new Error("rules");
    const row = await store.db.workspaceAccount.findFirst({ where: { siteUserId: 11n }, select: { sessionId: true } });
    const account = accountOf((await sessionStore(store.db).findLiveById(row?.sessionId ?? "", new Date()))!);
    const deps = { db: store.db, timeoutMs: 5000, perMinute: 100_000 };
    // claude-sonnet-4 (never called) triples; dall-e-3 (never called) gets cheaper.
    pricing.data[1]!.model_ratio = 4.5;
    pricing.data[2]!.model_price = 0.02;
    const at = Date.now() + 3_600_000 + 60_000;
    expect(await readSitePrices(store.db, account, deps, new Date(at))).toEqual({ changes: 2, published: true });
    await evaluateAlerts(store.db, new Date(at + 60_000));
    await evaluateAlerts(store.db, new Date(at + 120_000));
    const open = (await api.alerts.list({ state: "open" })).data.alerts;
    expect(open.map((a) => [a.rule.id, a.account.name, a.message, a.value])).toEqual([
      [rule.data.rule.id, "新站号", "gpt-4o-mini 涨价 33.3%（输入 $0.1500 → $0.2000/1M）", 33.3],
    ]);
    const told = await store.db.alertDelivery.findMany({ select: { event: true } });
    expect(told.map((d) => d.event)).toEqual(["opened"]);
    // A day after the change: the alert ends, with no "恢复" message (the price has not come back).
    await evaluateAlerts(store.db, new Date(at + 25 * 3_600_000));
    await evaluateAlerts(store.db, new Date(at + 25 * 3_600_000 + 60_000));
    expect((await api.alerts.list({ state: "open" })).data.total).toBe(0);
    expect((await store.db.alertDelivery.findMany({ select: { event: true } })).map((d) => d.event)).toEqual([
      "opened",
    ]);
  });

  it("reads a model gone from the list, or billed another way, as a rise of unknown size", () => {
    const move = { siteId: 1, model: "m", at: new Date() };
    const was = { inputPerM: 1, outputPerM: 2, perCall: null };
    expect(riseOf({ ...move, before: was, after: null })).toEqual({
      model: "m",
      risePct: null,
      text: "m 已从价格表下架",
    });
    expect(riseOf({ ...move, before: was, after: { inputPerM: null, outputPerM: null, perCall: 0.04 } })).toEqual({
      model: "m",
      risePct: null,
      text: "m 的计价方式已改变",
    });
    expect(riseOf({ ...move, before: null, after: was })).toBeNull();
    expect(riseOf({ ...move, before: was, after: { inputPerM: 0.5, outputPerM: 2, perCall: null } })).toBeNull();
    expect(riseOf({ ...move, before: was, after: { inputPerM: 1, outputPerM: 2.5, perCall: null } })).toEqual({
      model: "m",
      risePct: 25,
      text: "m 涨价 25.0%（输出 $2.00 → $2.50/1M）",
    });
  });
});

describe("Veloera and done-hub", () => {
  /** A model's prices as an account session's comparison gives them, rounded to 1e-4. */
  async function pricesOf(cookie: string, model: string) {
    const { api: own } = callerFor(store.db, { cookie });
    const rows = (await own.prices.compare({ model })).data.rows;
    const r4 = (n: number | null) => (n === null ? null : Math.round(n * 1e4) / 1e4);
    return rows.map((r) => [
      r.group,
      r.groupRatio,
      r4(r.inputPerMillionUsd),
      r4(r.outputPerMillionUsd),
      r4(r.perCallUsd),
      r.usable,
    ]);
  }

  it("Veloera: ratios as new-api's, a prefixed channel's copy priced on its own, the group's ratio from self/groups", async () => {
    const user: GatewayUser = {
      accessToken: "sk-prices-veloera-0123456789",
      data: newApiUser(31, { username: "ve", display_name: "维罗号", group: "vip" }),
      models: ["gpt-4o", "azure/gpt-4o", "mj_imagine"],
      logs: [],
    };
    const gateway = await startGateway({
      family: "veloera",
      users: [user],
      pricing: {
        data: [
          { model_name: "gpt-4o", quota_type: 0, model_ratio: 1.25, completion_ratio: 4, owner_by: "openai" },
          { model_name: "azure/gpt-4o", quota_type: 0, model_ratio: 1.5, completion_ratio: 4, owner_by: "openai" },
          { model_name: "mj_imagine", quota_type: 1, model_ratio: 0, model_price: 0.05, completion_ratio: 0 },
        ],
        groupRatios: { default: 1, vip: 0.8 },
      },
    });
    sites.push(gateway);
    const { id } = await siteRegistry(store.db).add({ name: "维罗站", url: gateway.url });
    const { cookie } = await signInWith(store.db, id, { id: 31, token: user.accessToken });
    // 1.25 × 2 = $2.50 in, × 4 = $10 out, × 0.8 for vip; the azure/ copy 1.5 × 2 × 0.8; per call $0.05 × 0.8.
    expect(await pricesOf(cookie, "gpt-4o")).toEqual([["vip", 0.8, 2, 8, null, true]]);
    expect(await pricesOf(cookie, "azure/gpt-4o")).toEqual([["vip", 0.8, 2.4, 9.6, null, true]]);
    expect(await pricesOf(cookie, "mj_imagine")).toEqual([["vip", 0.8, null, null, 0.04, true]]);
  });

  it("done-hub: one-hub's per-token prices, long_context left aside, a private group's ratio from the newest call", async () => {
    const user: GatewayUser = {
      accessToken: "sk-prices-donehub-0123456789",
      data: newApiUser(32, { username: "dh", display_name: "完成号", group: "svip" }),
      models: ["gpt-4o"],
      logs: [
        {
          createdAt: NOW - 600,
          type: 2,
          model: "gpt-4o",
          tokenName: "默认",
          tokenId: 1,
          quota: Math.ceil(1000 * 1.25 * 1.5 + 100 * 5 * 1.5),
          promptTokens: 1000,
          completionTokens: 100,
          durationMs: 800,
          stream: false,
          content: "",
          group: "svip",
          ratios: { model: 1.25, completion: 4, group: 1.5 },
        },
      ],
    };
    const gateway = await startGateway({
      family: "done-hub",
      users: [user],
      pricing: {
        data: [
          {
            model: "gpt-4o",
            type: "tokens",
            channel_type: 1,
            input: 1.25,
            output: 5,
            locked: false,
            long_context: { threshold: 200_000, input_ratio: 2, output_ratio: 1.5 },
          },
          { model: "dall-e-3", type: "times", channel_type: 1, input: 20, output: 20, locked: false },
        ],
        // svip is not public: no token-authenticated route tells its ratio.
        groupRatios: { default: 1 },
      },
    });
    sites.push(gateway);
    const { id } = await siteRegistry(store.db).add({ name: "完成站", url: gateway.url });
    const { cookie } = await signInWith(store.db, id, { id: 32, token: user.accessToken });
    const row = await sessionStore(store.db).findLiveById(
      (await store.db.session.findFirst({ where: { siteId: id }, select: { id: true } }))?.id ?? "",
      new Date(),
    );
    await syncLedger(
      store.db,
      accountOf(row!),
      { db: store.db, timeoutMs: 5000, perMinute: 100_000 },
      { backfillDays: 1 },
    );
    // 1.25 × 1e6 ÷ 500,000 = $2.50 in, 5 → $10 out, × 1.5 from the newest call's metadata.group_ratio.
    expect(await pricesOf(cookie, "gpt-4o")).toEqual([["svip", 1.5, 3.75, 15, null, true]]);
    // times: 1000 × 20 ÷ 500,000 = $0.04 a call, × 1.5 (not among the account's models: listed, not usable).
    expect(await pricesOf(cookie, "dall-e-3")).toEqual([["svip", 1.5, null, null, 0.06, false]]);
  });
});

describe("如果在别处 across a price change", () => {
  it("prices each day's usage at the list price of its day", async () => {
    const dayStart = Math.floor(NOW / 86_400) * 86_400;
    // Charged at the list of its day: model ratio 1 then ($2 / $8), 1.25 now ($2.50 / $10).
    const call = (at: number, prompt: number, completion: number, ratio: number): StandInLog => ({
      ...newApiCall(at, prompt, completion),
      model: "gpt-4o",
      quota: (prompt + completion * 4) * ratio,
    });
    const user: GatewayUser = {
      accessToken: "sk-prices-history-0123456789",
      data: newApiUser(33, { username: "hist", display_name: "历史号", group: "default" }),
      models: ["gpt-4o"],
      // 3 days ago at the old price, today (after the change) at the new one.
      logs: [call(NOW - 3 * 86_400, 1000, 500, 1), call(Math.max(dayStart, NOW - 60), 2000, 1000, 1.25)],
    };
    // Another account, on a site whose list has been $2.50 / $10 throughout.
    const other: GatewayUser = {
      accessToken: "sk-prices-history-other-0123",
      data: newApiUser(34, { username: "other", display_name: "另一号", group: "default" }),
      models: ["gpt-4o"],
      logs: [],
    };
    const gateway = await startGateway({
      family: "new-api",
      users: [user],
      pricing: {
        data: [{ model_name: "gpt-4o", quota_type: 0, model_ratio: 1.25, completion_ratio: 4 }],
        groupRatios: { default: 1 },
      },
    });
    const elsewhere = await startGateway({
      family: "new-api",
      users: [other],
      pricing: {
        data: [{ model_name: "gpt-4o", quota_type: 0, model_ratio: 1.25, completion_ratio: 4 }],
        groupRatios: { default: 1 },
      },
    });
    sites.push(gateway, elsewhere);
    const { id } = await siteRegistry(store.db).add({ name: "历史站", url: gateway.url });
    const { id: otherId } = await siteRegistry(store.db).add({ name: "另一站", url: elsewhere.url });
    const { cookie: first } = await signInWith(store.db, id, { id: 33, token: user.accessToken });
    const second = callerFor(store.db, { cookie: first });
    await second.api.auth.login({ userId: 34, accessToken: other.accessToken, siteId: otherId });
    const cookie = cookieFrom(second.ctx.resHeaders);
    const session = await store.db.session.findFirst({ where: { siteId: id }, select: { id: true } });
    const account = accountOf((await sessionStore(store.db).findLiveById(session?.id ?? "", new Date()))!);
    await syncLedger(store.db, account, { db: store.db, timeoutMs: 5000, perMinute: 100_000 }, { backfillDays: 5 });
    // The list as read ten days ago: $2.00 in, $8.00 out; read again now, at $2.50 and $10.
    await priceStore(store.db).recordSite(
      id,
      {
        prices: [{ model: "gpt-4o", inputPerMillionUsd: 2, outputPerMillionUsd: 8, perCallUsd: null, groups: null }],
        published: true,
        groupRatios: { default: 1 },
      },
      new Date((NOW - 10 * 86_400) * 1000),
    );
    const { api: own } = callerFor(store.db, { cookie });
    const today = new Date(NOW * 1000).toISOString().slice(0, 10);
    const from = new Date((NOW - 5 * 86_400) * 1000).toISOString().slice(0, 10);
    const answer = await own.prices.whatif({ from, to: today, tz: "UTC" });
    // Paid: (1000 × 2 + 500 × 8) ÷ 1M = $0.006 then, (2000 × 2.50 + 1000 × 10) ÷ 1M = $0.015 today;
    // there, then at its $2.50 / $10 against the $2 / $8 it was charged: $0.0075, and $0.015 today.
    const priced = (a: typeof answer) => a.data.rows.map((r) => [r.model, r.elsewhere.map((e) => [e.siteName, e.usd])]);
    expect(priced(answer)).toEqual([
      [
        "gpt-4o",
        [
          ["历史站", 0.021],
          ["另一站", 0.0225],
        ],
      ],
    ]);
    // Today alone: no change inside it, today's list on both.
    const alone = await own.prices.whatif({ from: today, to: today, tz: "UTC" });
    expect(priced(alone).map(([m, e]) => [m, (e as Array<[string, number]>).sort()])).toEqual([
      [
        "gpt-4o",
        [
          ["历史站", 0.015],
          ["另一站", 0.015],
        ],
      ],
    ]);
  });
});
