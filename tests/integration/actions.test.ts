import { describe, expect, it } from "vitest";
import { freshProcessState } from "../../src/server/core/process-state";
import { siteRegistry } from "../../src/server/sites/registry";
import { CRITICAL_LIMIT, takeCritical } from "../../src/server/actions/critical";
import { RECORD_KEEP_DAYS, actionRecords, pruneActionRecords, recordAction } from "../../src/server/actions/records";
import type { StandInCode, StandInFamily } from "../../src/demo/gateway";
import { bearer, callerFor, signInWith } from "../support/caller";
import { signInAndSync } from "../support/ledger";
import { type TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";

/**
 * Writes on an account's site against stand-ins faithful to gateway-actions.md: redeeming a code
 * on every family (the quota rises, the code is spent, a log entry is written; each family's
 * refusals in words), checking in on new-api and Veloera (status first, once a day, Turnstile
 * reported as a manual step), and the 操作记录 they leave, never with the code.
 */

let store: TempDb;
const open: FamilySite[] = [];
freshStorePerTest((s) => (store = s), open);

const CODES = (): StandInCode[] => [
  { key: "a".repeat(32), quota: 5_000_000, status: 1, id: 5 },
  { key: "b".repeat(32), quota: 1_000_000, status: 3, id: 6 },
  { key: "c".repeat(32), quota: 1_000_000, status: 1, id: 7, expiresAt: 1_000 },
];

async function signedIn(family: StandInFamily, extra: Record<string, unknown> = {}) {
  const site = await startFamilySite(family, 0, { codes: CODES(), ...extra });
  open.push(site);
  const { id } = await siteRegistry(store.db).add({ name: `站点 ${family}`, url: site.gateway.url });
  const { token } = await signInWith(store.db, id, site.user);
  const { api } = callerFor(store.db, {
    ...bearer(token),
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0",
  });
  return { site, api, siteId: id };
}

const FAMILIES: StandInFamily[] = ["new-api", "new-api-legacy", "veloera", "one-api", "one-hub", "done-hub"];

describe("actions.redeem", () => {
  it.each(FAMILIES)("on %s: adds the code's quota, spends the code, and says what was added", async (family) => {
    const { site, api } = await signedIn(family);
    const before = (await api.account.summary({})).success;
    expect(before).toBe(true);
    const quotaBefore = Number(site.user.data.quota);
    const done = await api.actions.redeem({ code: `  ${"a".repeat(32)}  ` });
    if (!done.success) throw new Error(done.message);
    expect(done.data).toMatchObject({ quota: 5_000_000, usd: 10, message: "兑换成功，增加 $10.00" });
    expect(Number(site.user.data.quota)).toBe(quotaBefore + 5_000_000);
    // The balance shown is the new one at once (the cached summary was forgotten).
    const after = await api.account.summary({});
    expect(after.success && after.data.balance.quota).toBe(quotaBefore + 5_000_000);
    // A top-up entry in the site's log, as the family writes it.
    expect(site.history.logs.at(-1)).toMatchObject({
      type: 1,
      content: expect.stringContaining("通过兑换码充值 ＄10.000000 额度") as unknown,
    });

    // Spent: the second try is refused, in the family's words (new-api's one sentence explained).
    const again = await api.actions.redeem({ code: "a".repeat(32) });
    expect(again.success).toBe(false);
    const used = family === "new-api" ? /^兑换失败：站点没有说明原因/ : /该兑换码已被使用/;
    expect(!again.success && again.message).toMatch(used);
    const expired = await api.actions.redeem({ code: "c".repeat(32) });
    expect(!expired.success && expired.message).toMatch(
      family === "new-api" ? /^兑换失败：站点没有说明原因/ : /兑换失败/,
    );

    // 操作记录: each try with the site's answer, never the code.
    const records = await api.actions.records({});
    expect(records.data.total).toBe(3);
    expect(records.data.items.map((r) => [r.kind, r.ok])).toEqual([
      ["redeem", false],
      ["redeem", false],
      ["redeem", true],
    ]);
    expect(records.data.items[2]).toMatchObject({ quota: 5_000_000, device: "API", message: "兑换成功，增加 $10.00" });
    expect(JSON.stringify(records.data)).not.toContain("a".repeat(32));
  });

  it("refuses an empty or spaced code before the site is asked, and explains new-api's closed redeeming", async () => {
    const { site, api } = await signedIn("new-api", { compliance: false });
    const asked = () => site.gateway.requests.filter((r) => r.path === "/api/user/topup").length;
    expect(await api.actions.redeem({ code: "   " })).toEqual({ success: false, message: "请填写兑换码" });
    expect(await api.actions.redeem({ code: "two words" })).toMatchObject({ success: false });
    expect(asked()).toBe(0);
    expect(await api.actions.redeem({ code: "a".repeat(32) })).toEqual({
      success: false,
      message: "站点尚未开放兑换：需要站点管理员先在后台确认合规声明",
    });
    expect(asked()).toBe(1);
  });

  it("counts new-api's critical calls of this address and says when to come back instead of spending the 21st", async () => {
    const { site, api, siteId } = await signedIn("new-api");
    // Nineteen spent already (redeems and key reveals of any account of this site).
    for (let i = 0; i < CRITICAL_LIMIT.calls - 1; i++) expect(takeCritical(siteId)).toBe(true);
    expect((await api.actions.redeem({ code: "a".repeat(32) })).success).toBe(true);
    const refused = await api.actions.redeem({ code: "d".repeat(32) });
    expect(!refused.success && refused.message).toMatch(
      /^站点限制每 20 分钟最多 20 次兑换或查看密钥，已用完，请约 20 分钟后再试$/,
    );
    expect(site.gateway.requests.filter((r) => r.path === "/api/user/topup")).toHaveLength(1);
  });

  it("allows six writes a minute per account, spends none on key reveals, and says when the next frees", async () => {
    const { site, api } = await signedIn("one-api");
    // Reveals are reads of the site: as many as wanted, and the writes are all still there.
    const token = site.history.tokens[0];
    if (!token) throw new Error("no token at the stand-in");
    for (let i = 0; i < 8; i++) expect((await api.tokens.reveal({ id: token.id })).success).toBe(true);
    for (let i = 0; i < 6; i++) expect((await api.actions.redeem({ code: `x${i}` })).success).toBe(false);
    const refused = await api.actions.redeem({ code: "a".repeat(32) });
    expect(!refused.success && refused.message).toMatch(
      /^操作过于频繁：每个账户每分钟最多 6 次写操作，请 (59|60) 秒后再试$/,
    );
    // The same words for every write: a check-in too.
    const checkin = await api.actions.checkin();
    expect(!checkin.success && checkin.message).toMatch(/^操作过于频繁：.*秒后再试$/);
  });
});

describe("actions.checkin", () => {
  it("new-api: status first, checks in once a day with its reward, and shows the month's record", async () => {
    const { site, api } = await signedIn("new-api", { status: { checkin_enabled: true }, checkinReward: 4821 });
    const status = await api.actions.checkinStatus();
    expect(status.success && status.data).toMatchObject({ state: "available", month: { checkins: 0 } });
    const done = await api.actions.checkin();
    expect(done).toEqual({
      success: true,
      data: { state: "done", quota: 4821, usd: 0.009642, message: "签到成功，获得 $0.0096" },
    });
    expect(site.history.logs.at(-1)).toMatchObject({ type: 4, content: "用户签到，获得额度 ＄0.009642 额度" });
    const posts = () =>
      site.gateway.requests.filter((r) => r.method === "POST" && r.path === "/api/user/checkin").length;
    expect(posts()).toBe(1);
    // Done today: the status says so and a second check-in asks the site nothing more.
    const again = await api.actions.checkin();
    expect(again.success && again.data.state).toBe("already");
    expect(posts()).toBe(1);
    const after = await api.actions.checkinStatus();
    expect(after.success && after.data).toMatchObject({ state: "done", month: { checkins: 1, quota: 4821 } });
    const records = await api.actions.records({});
    expect(records.data.items.map((r) => [r.kind, r.ok, r.message])).toEqual([
      ["checkin", true, "签到成功，获得 $0.0096"],
    ]);
  });

  it("new-api with Turnstile: reported as 需手动签到 with the site's address, never sent", async () => {
    const { site, api } = await signedIn("new-api", { status: { checkin_enabled: true, turnstile_check: true } });
    const status = await api.actions.checkinStatus();
    expect(status.success && status.data).toMatchObject({ state: "manual", manualUrl: `${site.gateway.url}/` });
    const result = await api.actions.checkin();
    expect(result.success && result.data.state).toBe("manual");
    expect(site.gateway.requests.filter((r) => r.method === "POST")).toHaveLength(0);
  });

  it("Veloera: checks in by UTC day with its own routes and a type-5 log", async () => {
    const { site, api } = await signedIn("veloera", { status: { check_in_enabled: true }, checkinReward: 1372 });
    expect((await api.actions.checkinStatus()).success && true).toBe(true);
    const done = await api.actions.checkin();
    expect(done.success && done.data).toMatchObject({ state: "done", quota: 1372 });
    expect(site.history.logs.at(-1)).toMatchObject({ type: 5, content: "签到奖励 ＄0.002744 额度" });
    const status = await api.actions.checkinStatus();
    expect(status.success && status.data.state).toBe("done");
  });

  it.each([
    ["one-api", {}, "unsupported"],
    ["one-hub", {}, "unsupported"],
    ["new-api", { status: { checkin_enabled: false } }, "disabled"],
    ["veloera", {}, "disabled"],
  ] as const)(
    "%s %j: says the site has no check-in or has it off, and asks it nothing",
    async (family, extra, state) => {
      const { site, api } = await signedIn(family, extra);
      const status = await api.actions.checkinStatus();
      expect(status.success && status.data.state).toBe(state);
      const result = await api.actions.checkin();
      expect(result.success && result.data.state).toBe(state);
      expect(site.gateway.requests.filter((r) => /check/.test(r.path))).toHaveLength(0);
      freshProcessState();
    },
  );
});

describe("操作记录", () => {
  it("are a workspace's own (a browser session never sees them) and leave after a year", async () => {
    const account = { siteId: 1, siteUserId: 7 };
    const at = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000);
    const add = (workspaceId: number | null, message: string, daysAgo = 0) =>
      recordAction(
        store.db,
        { ...account, workspaceId, device: "API" },
        { kind: "redeem", ok: true, message, quota: 1 },
        at(daysAgo),
      );
    await add(null, "browser");
    await add(1, "workspace 1");
    await add(2, "workspace 2");
    await add(1, "old", RECORD_KEEP_DAYS + 1);
    const seen = async (workspaceId: number | null) =>
      (await actionRecords(store.db, { ...account, workspaceId }, { page: 1, pageSize: 20 })).items.map(
        (r) => r.message,
      );
    expect(await seen(null)).toEqual(["browser"]);
    expect(await seen(1)).toEqual(["workspace 1", "browser", "old"]);
    expect(await seen(2)).toEqual(["workspace 2", "browser"]);
    expect(await pruneActionRecords(store.db)).toBe(1);
    expect(await seen(1)).toEqual(["workspace 1", "browser"]);
  });
});

describe("actions.checkinAll (全部签到)", () => {
  it("checks in every account of the browser where it can, and says why not for the others", async () => {
    const a = await startFamilySite("new-api", 0, { status: { checkin_enabled: true }, checkinReward: 4821 });
    const b = await startFamilySite("one-api", 1);
    open.push(a, b);
    const registry = siteRegistry(store.db);
    const first = await signInAndSync(
      store.db,
      (await registry.add({ name: "新站", url: a.gateway.url })).id,
      a.user,
      Math.floor(Date.now() / 1000),
    );
    const second = await signInAndSync(
      store.db,
      (await registry.add({ name: "老站", url: b.gateway.url })).id,
      b.user,
      Math.floor(Date.now() / 1000),
      first.cookie,
    );
    const { api } = callerFor(store.db, { cookie: second.cookie });
    const results = async () =>
      Object.fromEntries((await api.actions.checkinAll()).data.results.map((r) => [r.name, [r.state, r.message]]));
    expect(await results()).toEqual({
      "新站 · new-api 用户": ["done", "签到成功，获得 $0.0096"],
      "老站 · one-api 用户": ["unsupported", "这类站点没有签到功能"],
    });
    expect(await results()).toEqual({
      "新站 · new-api 用户": ["already", "今天已签到，无需重复签到"],
      "老站 · one-api 用户": ["unsupported", "这类站点没有签到功能"],
    });
    expect(a.gateway.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });
});
