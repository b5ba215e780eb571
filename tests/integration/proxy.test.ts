import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { siteRegistry } from "../../src/server/sites/registry";
import type { StandInFamily } from "../../src/demo/gateway";
import { FAMILY_LIST, startFamilySite, type FamilySite } from "../support/families";
import { tempStore, type TempDb } from "../support/db";
import { startApp, type RunningApp } from "../support/server";
import { signInOverHttp } from "../support/http";

/**
 * /api/site/{path} over HTTP, as a REST client uses it: the allowed user routes of each family
 * forwarded with the account's token (answers as the site sent them), and every dangerous route
 * refused on every method and spelling, never reaching the site.
 */

let store: TempDb;
let app: RunningApp;
const sites = new Map<StandInFamily, { site: FamilySite; token: string }>();

beforeAll(async () => {
  store = await tempStore();
  app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    SITE_TIMEOUT_MS: "2000",
    LOGIN_RATE_LIMIT: "0",
  });
  for (const [i, family] of (["new-api", "one-hub"] as StandInFamily[]).entries()) {
    const site = await startFamilySite(family, i, { codes: [{ key: "p".repeat(32), quota: 500_000, status: 1 }] });
    const { id } = await siteRegistry(store.db).add({ name: family, url: site.gateway.url });
    const signed = await signInOverHttp(app.url, { userId: site.user.id, accessToken: site.user.token, siteId: id });
    sites.set(family, { site, token: signed.token });
  }
}, 60_000);
afterAll(async () => {
  await app?.stop();
  for (const { site } of sites.values()) await site.gateway.close();
  await store?.cleanup();
});

async function proxy(family: StandInFamily, method: string, rest: string, body?: unknown) {
  const { token } = sites.get(family)!;
  const res = await fetch(`${app.url}/api/site/${rest}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    cache: res.headers.get("cache-control"),
  };
}

describe("/api/site/{path}", () => {
  it("forwards the allowed user routes with the account's token and answers as the site did", async () => {
    const { site } = sites.get("new-api")!;
    const self = await proxy("new-api", "GET", "user/self");
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({ success: true, data: { id: site.user.id } });
    const logs = await proxy("new-api", "GET", "log/self?p=1&page_size=5&type=2");
    expect((logs.body.data as { items: unknown[] }).items).toHaveLength(5);
    // The site saw our token and user headers, never the client's Bearer session.
    const last = site.gateway.requests.at(-1)!;
    expect(last.path).toBe("/api/log/self");
    expect(last.headers.authorization).toBe(site.user.token);
    expect(last.query).toContain("page_size=5");
    // A write: the code redeemed, kept in 操作记录 without the code.
    const redeemed = await proxy("new-api", "POST", "user/topup", { key: "p".repeat(32) });
    expect(redeemed.body).toMatchObject({ success: true, data: 500_000 });
    expect(redeemed.cache).toBe("no-store");
    const records = await fetch(`${app.url}/api/account/actions`, {
      headers: { authorization: `Bearer ${sites.get("new-api")!.token}` },
    });
    const text = await records.text();
    expect(text).toContain("POST /api/user/topup：成功");
    expect(text).not.toContain("p".repeat(32));
    // The families' own spelling with its trailing slash, as docs/api.md shows it: no redirect.
    const list = await fetch(`${app.url}/api/site/token/?p=1`, {
      headers: { authorization: `Bearer ${sites.get("new-api")!.token}` },
      redirect: "manual",
    });
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ success: true, data: { items: expect.any(Array) as unknown } });
    expect(site.gateway.requests.at(-1)).toMatchObject({ method: "GET", path: "/api/token/" });
    // (on the one-hub account: the new-api one's writes of the minute are the next test's)
    const hub = sites.get("one-hub")!.site;
    const made = await proxy("one-hub", "POST", "token/", { name: "via-proxy", remain_quota: 1000, expired_time: -1 });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ success: true });
    expect(hub.gateway.requests.at(-1)).toMatchObject({ method: "POST", path: "/api/token/" });
    const madeId = hub.history.tokens.find((t) => t.name === "via-proxy")!.id;
    const put = await proxy("one-hub", "PUT", "token/", {
      id: madeId,
      name: "via-proxy-2",
      remain_quota: 1000,
      expired_time: -1,
    });
    expect(put.body).toMatchObject({ success: true });
    expect(hub.gateway.requests.at(-1)).toMatchObject({ method: "PUT", path: "/api/token/" });
    // one-hub answers the token it made, its key in full: masked on the way through.
    expect(JSON.stringify(made.body)).not.toContain(hub.history.tokens.find((t) => t.id === madeId)!.key);
    // one-hub's own routes, and not new-api's.
    expect((await proxy("one-hub", "GET", "user/self")).body).toMatchObject({ success: true });
    expect((await proxy("one-hub", "GET", "user/models")).body).toMatchObject({ success: false });
  });

  const DANGEROUS: Array<[string, string]> = [
    ["GET", "user/token"],
    ["POST", "user/token"],
    ["GET", "user/token/"],
    ["GET", "User/Token"],
    ["GET", "user/%74oken"],
    ["GET", "user%2ftoken"],
    ["GET", "user/self/../token"],
    ["GET", "user/%2e%2e/user/token"],
    ["GET", "user//token"],
    ["GET", "user/token?redirect=/api/user/self"],
    ["DELETE", "user/self"],
    ["PUT", "user/self"],
    ["POST", "user/2fa/disable"],
    ["POST", "user/pay"],
    ["POST", "user/stripe/pay"],
    ["POST", "subscription/balance/pay"],
    ["GET", "option/"],
    ["PUT", "option/"],
    ["GET", "user/"],
    ["POST", "token"],
    ["GET", "user/self%00"],
  ];
  it.each(DANGEROUS)("refuses %s %s and never reaches the site", async (method, rest) => {
    const { site } = sites.get("new-api")!;
    const before = site.gateway.requests.length;
    const answer = await proxy("new-api", method, rest, method === "GET" || method === "DELETE" ? undefined : {});
    expect(answer.body.success).toBe(false);
    expect(String(answer.body.message)).toMatch(/^不允许代理|^站点返回|^请求/);
    expect(site.gateway.requests.slice(before).filter((r) => r.path !== "/api/status")).toEqual([]);
  });
});

describe("/api/site/{path}: credentials never pass through", () => {
  /** Every key of an answer, at every depth. */
  const keysOf = (v: unknown): string[] =>
    v === null || typeof v !== "object"
      ? []
      : Array.isArray(v)
        ? v.flatMap(keysOf)
        : Object.entries(v).flatMap(([k, x]) => [k, ...keysOf(x)]);

  it.each(FAMILY_LIST)(
    "%s: the user object without its access token, the token list with masked keys",
    async (family) => {
      const site = await startFamilySite(family, 10 + FAMILY_LIST.indexOf(family));
      try {
        const { id } = await siteRegistry(store.db).add({ name: `clean-${family}`, url: site.gateway.url });
        const signed = await signInOverHttp(app.url, {
          userId: site.user.id,
          accessToken: site.user.token,
          siteId: id,
        });
        const get = async (rest: string) => {
          const res = await fetch(`${app.url}/api/site/${rest}`, {
            headers: { authorization: `Bearer ${signed.token}` },
          });
          return { text: await res.text(), sent: site.gateway.requests.at(-1)! };
        };
        const self = await get("user/self");
        expect(self.sent.path).toBe("/api/user/self");
        expect(JSON.parse(self.text)).toMatchObject({ success: true, data: { id: site.user.id } });
        expect(self.text).not.toContain(site.user.token);
        expect(keysOf(JSON.parse(self.text))).not.toEqual(
          expect.arrayContaining([expect.stringMatching(/^(access_token|password|verification_code)$/)]),
        );
        const tokens = await get("token/?p=0");
        expect(tokens.sent.path).toBe("/api/token/");
        expect(JSON.parse(tokens.text)).toMatchObject({ success: true });
        for (const t of site.history.tokens) expect(tokens.text).not.toContain(t.key);
        expect(tokens.text).toMatch(/"key":"[^"]{4}\*\*\*\*[^"]{4}"/);
      } finally {
        await site.gateway.close();
      }
    },
  );
});

describe("/api/account/tokens over HTTP", () => {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${app.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${sites.get("new-api")!.token}`,
        ...(body ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  };

  it("creates, edits, disables, reveals (no-store) and deletes a token, as documented", async () => {
    const { site } = sites.get("new-api")!;
    const made = await call("POST", "/api/account/tokens", { name: "rest-1", models: ["gpt-4o"] });
    expect(made.body).toMatchObject({ success: true, data: { message: "令牌已创建" } });
    const id = (made.body.data as { id: number }).id;
    expect(site.history.tokens.find((t) => t.id === id)?.name).toBe("rest-1");

    const edited = await call("PATCH", `/api/account/tokens/${id}`, { name: "rest-2" });
    expect(edited.body).toEqual({ success: true, data: { id, message: "令牌已保存" } });
    expect(site.history.tokens.find((t) => t.id === id)).toMatchObject({
      name: "rest-2",
      limits: { models: ["gpt-4o"] },
    });

    const off = await call("POST", `/api/account/tokens/${id}/status`, { enabled: false });
    expect(off.body).toEqual({ success: true, data: { id, message: "令牌已禁用" } });

    const rules = await call("GET", "/api/account/tokens/rules");
    expect(rules.body).toMatchObject({ success: true, data: { nameBytes: 50, batchDelete: true } });

    const key = await call("POST", `/api/account/tokens/${id}/key`);
    expect(key.headers.get("cache-control")).toBe("no-store");
    const stored = site.history.tokens.find((t) => t.id === id)!;
    expect(key.body).toMatchObject({ success: true, data: { id, key: `sk-${stored.key}` } });

    const bad = await call("POST", "/api/account/tokens", { name: "x".repeat(51) });
    expect(bad.body).toEqual({
      success: false,
      message: "令牌名称太长：这个站点最多 50 字节（约 16 个汉字），现在是 51 字节",
    });
    const gone = await call("DELETE", `/api/account/tokens/${id}`);
    expect(gone.body).toEqual({ success: true, data: { deleted: 1, failed: [], permanent: false } });
    expect(stored.deleted).toBe(true);
  });

  it("refuses a cross-site write carried by the cookie, and nothing reaches the site", async () => {
    const { site } = sites.get("new-api")!;
    const signed = await signInOverHttp(app.url, { userId: site.user.id, accessToken: site.user.token, siteId: 1 });
    const before = site.gateway.requests.length;
    const res = await fetch(`${app.url}/api/account/tokens/1/key`, {
      method: "POST",
      headers: { cookie: signed.cookie, "sec-fetch-site": "cross-site", origin: "https://evil.example" },
    });
    expect(res.status).toBe(403);
    expect(site.gateway.requests.length).toBe(before);
  });
});
