import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway, type StandInFamily } from "../../src/demo/gateway";
import { freshProcessState } from "../../src/server/core/process-state";
import { siteRegistry } from "../../src/server/sites/registry";
import { freshProfile } from "../../src/server/sites/probe";
import { siteDay } from "../../src/server/actions/checkin";
import { CHECKIN_MAX_TRIES, checkinMoment, runAutoCheckins } from "../../src/server/jobs/checkin";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * 自动签到 in the job runner: once a site day at the account's own moment, only for the accounts
 * opted in; a Turnstile site settled as 需手动签到 until the next day; an unreachable site tried
 * again an hour later, three times at most; the outcome on the account and in its 操作记录.
 */

let store: TempDb;
let open: RunningGateway[] = [];
let address = 0;
const OPTS = { timeoutMs: 1500, perMinute: 600 };
const OPTS_DB = () => ({ db: store.db, ...OPTS });

beforeEach(async () => {
  store = await tempStore();
  freshProcessState();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((g) => g.close()));
  await store.cleanup();
});

/** A workspace with one account saved on a fresh stand-in of the family, 自动签到 on or off. */
async function savedOn(family: StandInFamily, status: Record<string, unknown>, auto = true) {
  const token = `sk-checkin-${family}-0123456789abcdef`;
  const gateway = await startGateway({
    family,
    users: [{ accessToken: token, data: newApiUser(601, { username: "checker" }) }],
    status,
    checkinReward: 2500,
  });
  open.push(gateway);
  const { id: siteId } = await siteRegistry(store.db).add({ name: `${family} 签到站`, url: gateway.url });
  const { api: anon } = callerFor(store.db, {}, { clientAddress: `198.51.100.${++address}` });
  const registered = await anon.workspace.register({ name: `签到 ${address}`, password: "correct horse battery" });
  const { api } = callerFor(store.db, bearer(registered.data.token));
  const saved = await api.workspace.addAccount({ siteId, userId: 601, accessToken: token });
  if (!saved.success) throw new Error(saved.message);
  const id = saved.data.account.id;
  if (auto) await api.workspace.updateAccount({ id, autoCheckin: true });
  return { gateway, api, id, siteId };
}

const posts = (g: RunningGateway) =>
  g.requests.filter((r) => r.method === "POST" && /^\/api\/user\/check_?in$/.test(r.path)).length;
/** A moment of the family's current site day after every account's own moment has come. */
const lateInDay = (family: "new-api" | "veloera") => siteDay(family, Date.now()).start + (20 * 60 + 31) * 60_000;

describe("the moment and the day", () => {
  it("spreads accounts over 00:30–20:30 of the site's day, the same moment every day", () => {
    const moments = Array.from({ length: 2000 }, (_, i) => checkinMoment(i + 1));
    expect(Math.min(...moments)).toBeGreaterThanOrEqual(30 * 60_000);
    expect(Math.max(...moments)).toBeLessThan((20 * 60 + 30) * 60_000);
    expect(new Set(moments).size).toBeGreaterThan(700);
    expect(checkinMoment(17)).toBe(checkinMoment(17));
  });

  it("counts Veloera's days in UTC and new-api's in UTC+8", () => {
    const at = Date.parse("2026-11-24T20:00:00Z");
    expect(siteDay("veloera", at)).toEqual({ day: "2026-11-24", start: Date.parse("2026-11-24T00:00:00Z") });
    expect(siteDay("new-api", at)).toEqual({ day: "2026-11-25", start: Date.parse("2026-11-24T16:00:00Z") });
  });
});

describe("runAutoCheckins", () => {
  it("checks an opted-in new-api account in once a day, keeps the outcome on it and in 操作记录", async () => {
    const on = await savedOn("new-api", { checkin_enabled: true });
    const off = await savedOn("new-api", { checkin_enabled: true }, false);
    // Before the account's moment of the day: nothing.
    const { start } = siteDay("new-api", Date.now());
    expect(await runAutoCheckins(store.db, OPTS, start + checkinMoment(on.id) - 60_000)).toBe(0);

    const now = lateInDay("new-api");
    expect(await runAutoCheckins(store.db, OPTS, now)).toBe(1);
    expect(posts(on.gateway)).toBe(1);
    expect(posts(off.gateway)).toBe(0);
    const list = await on.api.workspace.accounts();
    expect(list.data.accounts[0]).toMatchObject({
      autoCheckin: true,
      checkin: { day: siteDay("new-api", now).day, state: "done", message: "签到成功，获得 $0.0050" },
    });
    const records = await on.api.actions.records({});
    expect(records.data.items[0]).toMatchObject({ kind: "checkin", ok: true, device: "自动签到" });

    // Settled for the day: later ticks leave it alone.
    expect(await runAutoCheckins(store.db, OPTS, now + 2 * 3_600_000)).toBe(0);
    // The next day it is tried again (the site, on its own clock, says today's is done).
    expect(await runAutoCheckins(store.db, OPTS, now + 24 * 3_600_000)).toBe(1);
    expect(posts(on.gateway)).toBe(1);
    const next = await on.api.workspace.accounts();
    expect(next.data.accounts[0]?.checkin?.state).toBe("already");

    // The overview row shows it too.
    const overview = await on.api.account.overview({});
    expect(overview.data.rows[0]?.saved).toMatchObject({ autoCheckin: true, checkin: { state: "already" } });
  });

  it("settles a Turnstile site as 需手动签到 until the next day", async () => {
    const s = await savedOn("new-api", { checkin_enabled: true, turnstile_check: true });
    const now = lateInDay("new-api");
    await runAutoCheckins(store.db, OPTS, now);
    const list = await s.api.workspace.accounts();
    expect(list.data.accounts[0]?.checkin).toMatchObject({
      state: "manual",
      message: expect.stringContaining("手动签到") as unknown,
    });
    expect(posts(s.gateway)).toBe(0);
    expect(await runAutoCheckins(store.db, OPTS, now + 3 * 3_600_000)).toBe(0);
  });

  it("tries an unreachable Veloera site again an hour later, three times a day at most", async () => {
    const s = await savedOn("veloera", { check_in_enabled: true });
    const now = lateInDay("veloera");
    // The site was read once (its family known), then went down.
    await freshProfile(store.db, s.siteId, OPTS_DB());
    await s.gateway.close();
    open = open.filter((g) => g !== s.gateway);
    expect(await runAutoCheckins(store.db, OPTS, now)).toBe(1);
    let list = await s.api.workspace.accounts();
    expect(list.data.accounts[0]?.checkin).toMatchObject({
      state: "failed",
      message: "站点请求失败: 连接被拒绝",
    });
    // Not again within the hour; then again, up to three tries.
    expect(await runAutoCheckins(store.db, OPTS, now + 30 * 60_000)).toBe(0);
    expect(await runAutoCheckins(store.db, OPTS, now + 61 * 60_000)).toBe(1);
    expect(await runAutoCheckins(store.db, OPTS, now + 122 * 60_000)).toBe(1);
    expect(await runAutoCheckins(store.db, OPTS, now + 183 * 60_000)).toBe(0);
    list = await s.api.workspace.accounts();
    expect(list.data.accounts[0]?.checkin?.state).toBe("failed");
    expect(CHECKIN_MAX_TRIES).toBe(3);
  });

  it("checks a Veloera account in on its UTC day, and leaves sites without check-in settled", async () => {
    const velo = await savedOn("veloera", { check_in_enabled: true });
    const hub = await savedOn("one-hub", {});
    await runAutoCheckins(store.db, OPTS, lateInDay("veloera"));
    expect(posts(velo.gateway)).toBe(1);
    const v = await velo.api.workspace.accounts();
    expect(v.data.accounts[0]?.checkin).toMatchObject({ day: siteDay("veloera", Date.now()).day, state: "done" });
    // one-hub has no check-in: said once a day, nothing sent.
    await runAutoCheckins(store.db, OPTS, lateInDay("new-api"));
    const h = await hub.api.workspace.accounts();
    expect(h.data.accounts[0]?.checkin?.state).toBe("unsupported");
    expect(hub.gateway.requests.filter((r) => r.path.includes("check")).length).toBe(0);
  });

  it("is offered only where the site's family has a check-in, and refused elsewhere in words", async () => {
    const hub = await savedOn("one-hub", {}, false);
    const api = await savedOn("new-api", { checkin_enabled: true }, false);
    // Both sites' families are known once probed.
    await freshProfile(store.db, hub.siteId, OPTS);
    await freshProfile(store.db, api.siteId, OPTS);
    expect((await hub.api.workspace.accounts()).data.accounts[0]?.checkinOffered).toBe(false);
    expect((await api.api.workspace.accounts()).data.accounts[0]?.checkinOffered).toBe(true);
    const refused = await hub.api.workspace.updateAccount({ id: hub.id, autoCheckin: true });
    expect(refused).toEqual({
      success: false,
      message: "「one-hub 签到站」是 one-hub 站点，没有签到功能，不能开启自动签到",
    });
    expect((await hub.api.workspace.accounts()).data.accounts[0]?.autoCheckin).toBe(false);
    const on = await api.api.workspace.updateAccount({ id: api.id, autoCheckin: true });
    expect(on.success && on.data.account.autoCheckin).toBe(true);
  });
});
