import { describe, expect, it } from "vitest";
import { parse } from "csv-parse/sync";
import { siteRegistry } from "../../src/server/sites/registry";
import { CRITICAL_LIMIT, takeCritical } from "../../src/server/actions/critical";
import type { StandInFamily, StandInToken } from "../../src/demo/gateway";
import { bearer, callerFor, signInWith } from "../support/caller";
import { type TempDb } from "../support/db";
import { FAMILY_LIST, freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";

/**
 * Managing API keys on every family's stand-in (gateway-actions.md §2.2–§6): create (the key found
 * where the site answers without it), edit as read-modify-write (a partial PUT resets the rest),
 * enable/disable with the family's refusals, delete (one-api's for good, new-api's in one batch),
 * the full key on explicit request only (new-api's critical budget counted), and the family's
 * rules checked before anything is sent.
 */

let store: TempDb;
const open: FamilySite[] = [];
freshStorePerTest((s) => (store = s), open);

async function signedIn(family: StandInFamily, extra: Record<string, unknown> = {}) {
  const site = await startFamilySite(family, 0, extra);
  open.push(site);
  const { id } = await siteRegistry(store.db).add({ name: `站点 ${family}`, url: site.gateway.url });
  const { token } = await signInWith(store.db, id, site.user);
  const { api, ctx } = callerFor(store.db, bearer(token));
  return { site, api, ctx, siteId: id };
}

const tokensOf = (site: FamilySite) => site.history.tokens;
const storedNamed = (site: FamilySite, name: string) => tokensOf(site).find((t) => t.name === name && !t.deleted);
const sent = (site: FamilySite, method: string, path: RegExp) =>
  site.gateway.requests.filter((r) => r.method === method && path.test(r.path));

const IN_A_MONTH = new Date(Date.now() + 30 * 86_400_000);
IN_A_MONTH.setUTCMilliseconds(0);
const groupOf = (family: StandInFamily) => (family === "one-api" ? "" : family.endsWith("hub") ? "vip" : "svip");

describe("tokens.create", () => {
  it.each(FAMILY_LIST)("on %s: sends the family's fields, finds the new token, and lists it", async (family) => {
    const { site, api } = await signedIn(family);
    // The list is kept for a while; the new token must show at once.
    const before = await api.account.tokens({});
    expect(before.success).toBe(true);
    const made = await api.tokens.create({
      name: "脚本-1",
      unlimited: false,
      remainQuota: 2_500_000,
      expiresAt: IN_A_MONTH.toISOString(),
      models: ["gpt-4o-mini", "claude-sonnet-4"],
      allowIps: ["203.0.113.7", "10.0.0.0/8"],
      group: groupOf(family),
    });
    if (!made.success) throw new Error(made.message);
    const stored = storedNamed(site, "脚本-1") as StandInToken;
    expect(made.data).toEqual({ id: stored.id, message: "令牌已创建" });
    expect(stored).toMatchObject({
      remainQuota: 2_500_000,
      unlimited: false,
      expiredTime: IN_A_MONTH.getTime() / 1000,
      limits: {
        models: ["gpt-4o-mini", "claude-sonnet-4"],
        // one-api takes networks only: the single address went as /32.
        ips: family === "one-api" ? ["203.0.113.7/32", "10.0.0.0/8"] : ["203.0.113.7", "10.0.0.0/8"],
      },
      group: groupOf(family),
    });
    const list = await api.account.tokens({});
    const row = list.success ? list.data.items.find((t) => t.id === stored.id) : undefined;
    expect(row).toMatchObject({
      name: "脚本-1",
      status: "enabled",
      models: ["gpt-4o-mini", "claude-sonnet-4"],
      expiresAt: IN_A_MONTH.toISOString(),
    });
    expect(row?.key).not.toBe(stored.key);
    const records = await api.actions.records({});
    expect(records.data.items[0]).toMatchObject({ kind: "token", ok: true, message: "创建令牌「脚本-1」：成功" });
  });

  it("refuses what the family would refuse before anything is sent, in words", async () => {
    const oneApi = await signedIn("one-api");
    const base = { unlimited: true, models: [], allowIps: [], group: "" };
    const cases: Array<[Parameters<typeof oneApi.api.tokens.create>[0], RegExp]> = [
      // 11 Chinese characters are 33 bytes: over one-api's 30.
      [{ ...base, name: "一二三四五六七八九十一" }, /最多 30 字节（约 10 个汉字），现在是 33 字节/],
      [{ ...base, name: "  " }, /请填写令牌名称/],
      [{ ...base, name: "x", allowIps: ["10.0.0.300"] }, /不是 IP 地址或网段/],
      [{ ...base, name: "x", allowIps: ["10.0.0.0/33"] }, /不是 IP 地址或网段/],
      [{ ...base, name: "x", models: ["a,b"] }, /不能含逗号/],
      [{ ...base, name: "x", expiresAt: "2020-01-01T00:00:00Z" }, /过期时间应晚于现在/],
      [{ ...base, name: "x", group: "vip" }, /不能指定分组/],
    ];
    for (const [input, message] of cases) {
      const answer = await oneApi.api.tokens.create(input);
      expect(answer.success, JSON.stringify(input)).toBe(false);
      expect(!answer.success && answer.message).toMatch(message);
    }
    // Nothing was sent, and none of the account's writes of the minute was spent.
    expect(sent(oneApi.site, "POST", /^\/api\/token/)).toHaveLength(0);
    expect((await oneApi.api.tokens.create({ ...base, name: "ok" })).success).toBe(true);

    // new-api: 50 bytes, and its quota ceiling of 1e9 × quota_per_unit.
    const na = await signedIn("new-api");
    const ok = await na.api.tokens.create({ ...base, name: "一二三四五六七八九十一二三四五六" });
    expect(ok.success).toBe(true);
    const long = await na.api.tokens.create({ ...base, name: "一二三四五六七八九十一二三四五六七" });
    expect(!long.success && long.message).toMatch(/最多 50 字节/);
    const huge = await na.api.tokens.create({ ...base, name: "x", unlimited: false, remainQuota: 5e14 + 1 });
    expect(!huge.success && huge.message).toBe("额度超出了这个站点允许的最大值");
  });

  it("says the site's own refusal (a one-hub group the user may not use)", async () => {
    const { api } = await signedIn("one-hub");
    const answer = await api.tokens.create({ name: "x", group: "svip" });
    expect(answer).toEqual({ success: false, message: "当前用户组无权使用指定的分组" });
    const records = await api.actions.records({});
    expect(records.data.items[0]).toMatchObject({ ok: false, message: "创建令牌「x」：当前用户组无权使用指定的分组" });
  });
});

describe("a create clicked twice", () => {
  it("makes one token, both clicks answered alike; another name makes another", async () => {
    const { site, api } = await signedIn("new-api");
    const posts = () => sent(site, "POST", /^\/api\/token\/?$/).length;
    const [a, b] = await Promise.all([api.tokens.create({ name: "双击" }), api.tokens.create({ name: "双击" })]);
    expect(a.success).toBe(true);
    expect(b).toEqual(a);
    expect(posts()).toBe(1);
    expect(tokensOf(site).filter((t) => t.name === "双击" && !t.deleted)).toHaveLength(1);
    expect((await api.tokens.create({ name: "另一个" })).success).toBe(true);
    expect(posts()).toBe(2);
  });
});

describe("tokens.update", () => {
  it.each(FAMILY_LIST)("on %s: renaming keeps every other field (the site replaces them all)", async (family) => {
    const { site, api } = await signedIn(family);
    await api.tokens.create({
      name: "keep",
      unlimited: false,
      remainQuota: 700_000,
      expiresAt: IN_A_MONTH.toISOString(),
      models: ["gpt-4o"],
      allowIps: ["192.0.2.0/24"],
      group: groupOf(family),
    });
    const stored = storedNamed(site, "keep") as StandInToken;
    const snapshot = structuredClone(stored);
    const done = await api.tokens.update({ id: stored.id, name: "kept" });
    expect(done).toEqual({ success: true, data: { id: stored.id, message: "令牌已保存" } });
    expect(stored).toEqual({ ...snapshot, name: "kept" });
    // The PUT went to the canonical path with every field, never the key.
    const put = sent(site, "PUT", /^\/api\/token\/$/);
    expect(put).toHaveLength(1);

    const limits = await api.tokens.update({ id: stored.id, models: [], unlimited: true });
    expect(limits.success).toBe(true);
    expect(stored).toMatchObject({ name: "kept", unlimited: true, expiredTime: snapshot.expiredTime });
    expect(stored.limits?.models).toEqual([]);
    expect(stored.limits?.ips).toEqual(snapshot.limits?.ips);
  });

  it("answers a token that is not there in the site's words", async () => {
    const { api } = await signedIn("new-api");
    const answer = await api.tokens.update({ id: 9999, name: "x" });
    expect(answer).toEqual({ success: false, message: "站点上没有这个令牌（可能已被删除）" });
  });
});

describe("tokens.setStatus and tokens.remove", () => {
  it.each(FAMILY_LIST)("on %s: disables, enables, refuses to enable an expired key, deletes", async (family) => {
    const { site, api } = await signedIn(family);
    const [first, second] = tokensOf(site) as [StandInToken, StandInToken];
    const off = await api.tokens.setStatus({ id: first.id, enabled: false });
    expect(off).toEqual({ success: true, data: { id: first.id, message: "令牌已禁用" } });
    expect(first.status).toBe(2);
    const list = await api.account.tokens({});
    expect(list.success && list.data.items.find((t) => t.id === first.id)?.status).toBe("disabled");
    await api.tokens.setStatus({ id: first.id, enabled: true });
    expect(first.status).toBe(1);

    second.status = 3;
    second.expiredTime = Math.floor(Date.now() / 1000) - 60;
    const expired = await api.tokens.setStatus({ id: second.id, enabled: true });
    expect(expired).toEqual({
      success: false,
      message: "令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期",
    });

    const rules = await api.tokens.rules();
    expect(rules.success && rules.data.hardDelete).toBe(family === "one-api");
    const gone = await api.tokens.remove({ ids: [first.id, second.id] });
    expect(gone).toEqual({
      success: true,
      data: { deleted: 2, failed: [], permanent: family === "one-api" },
    });
    // new-api deletes a batch in one call; the others one by one.
    expect(sent(site, "POST", /^\/api\/token\/batch$/)).toHaveLength(family === "new-api" ? 1 : 0);
    expect(sent(site, "DELETE", /^\/api\/token\/\d+$/)).toHaveLength(family === "new-api" ? 0 : 2);
    const after = await api.account.tokens({});
    expect(after.success && after.data.items.map((t) => t.id)).not.toContain(first.id);
    if (family === "one-api") expect(tokensOf(site).some((t) => t.id === first.id)).toBe(false);
    else expect(tokensOf(site).find((t) => t.id === first.id)?.deleted).toBe(true);

    const missing = await api.tokens.remove({ ids: [9999] });
    expect(missing).toEqual({
      success: true,
      data: {
        deleted: 0,
        failed: [{ id: 9999, message: "站点上没有这个令牌（可能已被删除）" }],
        permanent: family === "one-api",
      },
    });
  });
});

describe("tokens.reveal", () => {
  it.each(FAMILY_LIST)("on %s: the full key with sk-, client configurations, recorded without it", async (family) => {
    const { site, api, ctx } = await signedIn(family);
    const token = tokensOf(site)[0] as StandInToken;
    const shown = await api.tokens.reveal({ id: token.id });
    if (!shown.success) throw new Error(shown.message);
    expect(shown.data).toMatchObject({ id: token.id, name: token.name, key: `sk-${token.key}` });
    expect(ctx.resHeaders.get("cache-control")).toBe("no-store");
    // Only current new-api reveals from its critical budget.
    expect(sent(site, "POST", /^\/api\/token\/\d+\/key$/)).toHaveLength(family === "new-api" ? 1 : 0);

    const { env, cherryStudio, ccSwitch } = shown.data.exports;
    expect(env).toBe(`OPENAI_BASE_URL=${site.gateway.url}/v1\nOPENAI_API_KEY=sk-${token.key}\n`);
    const data = new URL(cherryStudio.link).searchParams.get("data") ?? "";
    const cherry = JSON.parse(
      Buffer.from(data.replaceAll("_", "+").replaceAll("-", "/"), "base64").toString("utf8"),
    ) as Record<string, string>;
    expect(cherry).toMatchObject({ type: "openai", baseUrl: site.gateway.url, apiKey: `sk-${token.key}` });
    const claude = new URL(ccSwitch.claude).searchParams;
    expect([claude.get("resource"), claude.get("app"), claude.get("endpoint"), claude.get("apiKey")]).toEqual([
      "provider",
      "claude",
      site.gateway.url,
      `sk-${token.key}`,
    ]);
    expect(new URL(ccSwitch.codex).searchParams.get("endpoint")).toBe(`${site.gateway.url}/v1`);

    const records = await api.actions.records({});
    expect(records.data.items[0]).toMatchObject({ kind: "token", message: `查看令牌「${token.name}」的密钥：成功` });
    expect(JSON.stringify(records.data)).not.toContain(token.key);
  });

  it("on new-api: says what is left of the critical budget, and when to come back once it is spent", async () => {
    const { site, api, siteId } = await signedIn("new-api");
    const token = tokensOf(site)[0] as StandInToken;
    const rules = await api.tokens.rules();
    expect(rules.success && rules.data.critical).toEqual({ limit: CRITICAL_LIMIT.calls, left: 20, nextAt: null });
    await api.tokens.reveal({ id: token.id });
    const after = await api.tokens.rules();
    expect(after.success && after.data.critical?.left).toBe(19);
    // Spend the rest elsewhere (redeems count too).
    while (takeCritical(siteId));
    const calls = site.gateway.requests.length;
    const refused = await api.tokens.reveal({ id: token.id });
    expect(!refused.success && refused.message).toMatch(
      /^站点限制每 20 分钟最多 20 次兑换或查看密钥，已用完，请约 \d+ 分钟后再试$/,
    );
    // Only the token's own read went out, not the reveal.
    expect(sent(site, "POST", /\/key$/)).toHaveLength(1);
    expect(site.gateway.requests.length).toBe(calls + 1);
  });

  it("on a new-api build that lists full keys: reads it without spending a critical call", async () => {
    const { site, api } = await signedIn("new-api-legacy");
    const token = tokensOf(site)[0] as StandInToken;
    const shown = await api.tokens.reveal({ id: token.id });
    expect(shown.success && shown.data.key).toBe(`sk-${token.key}`);
    const rules = await api.tokens.rules();
    expect(rules.success && rules.data.critical).toBeNull();
  });
});

describe("actions.recordsCsv", () => {
  it("exports every record of the account as CSV that parses back, never a key", async () => {
    const { site, api } = await signedIn("new-api");
    await api.tokens.create({ name: "=HYPERLINK(1)" });
    const token = tokensOf(site)[0] as StandInToken;
    await api.tokens.reveal({ id: token.id });
    await api.tokens.setStatus({ id: 9999, enabled: false });
    const file = await api.actions.recordsCsv();
    expect(file.data.filename).toMatch(/^actions_\d+_201_\d{4}-\d{2}-\d{2}\.csv$/);
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(file.data.body as Uint8Array);
    expect(text.startsWith("\uFEFF时间 (UTC),类型,结果,说明,额度,来源\r\n")).toBe(true);
    const rows: string[][] = parse(text, { bom: true, record_delimiter: "\r\n" });
    const records = await api.actions.records({});
    expect(rows.slice(1).map((r) => [r[0], r[2], r[3]])).toEqual(
      records.data.items.map((r) => [
        r.at,
        r.ok ? "成功" : "失败",
        r.message.startsWith("=") ? `'${r.message}` : r.message,
      ]),
    );
    expect(rows).toHaveLength(4);
    expect(rows.at(-1)?.slice(1, 4)).toEqual(["令牌", "成功", "创建令牌「=HYPERLINK(1)」：成功"]);
    expect(text).not.toContain(token.key);
  });
});

describe("tokens.options", () => {
  it.each(FAMILY_LIST)("on %s: the groups a token may use with their ratios, and the usable models", async (family) => {
    const { site, api } = await signedIn(family);
    const answer = await api.tokens.options();
    if (!answer.success) throw new Error(answer.message);
    const { groups, models } = answer.data;
    // The same read as 模型价格's: one-api publishes no group ratios to a token.
    if (family === "one-api") expect(groups).toBeNull();
    else expect(groups?.length).toBeGreaterThan(0);
    for (const g of groups ?? []) expect(g.ratio).toBeGreaterThanOrEqual(0);
    expect(groups?.map((g) => g.ratio)).toEqual(groups?.map((g) => g.ratio).sort((a, b) => a - b));
    expect(models).toEqual(expect.arrayContaining(["gpt-4o-mini"]));
    // Read within the hour: asked again, the site is not.
    const calls = site.gateway.requests.length;
    await api.tokens.options();
    expect(site.gateway.requests.length).toBe(calls);
  });
});
