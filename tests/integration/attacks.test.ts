import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "../../src/demo/gateway";
import { setOperatorPassword } from "../../src/server/admin/operator";
import { siteRegistry } from "../../src/server/sites/registry";
import { ALICE, BOB } from "../support/gateway";
import { freshRateWindow, request, signInOverHttp } from "../support/http";
import { startApp, type RunningApp } from "../support/server";
import { storeForAnotherServer } from "../support/db";
import { startFixture, type Fixture } from "../support/suite";

/** Attacks on the production server, each answered at its root (the second security round). */
let fx: Fixture;
let open: RunningApp;
let limited: RunningApp;
let proxied: RunningApp;
let internal: RunningGateway;
let redirecting: RunningGateway;
let redirectingSite: number;

beforeAll(async () => {
  fx = await startFixture();
  // An "internal" service the server must never be bounced to, and a site that tries.
  internal = await startGateway({ users: [{ accessToken: ALICE.token, data: ALICE.data }] });
  redirecting = await startGateway({
    users: [],
    intercept: (_req, res) => {
      res.writeHead(302, { Location: `${internal.url}/api/user/self` });
      res.end();
      return true;
    },
  });
  redirectingSite = (await siteRegistry(fx.store.db).add({ name: "跳转站点", url: redirecting.url })).id;
  const base = { DATABASE_URL: fx.store.url, DATA_DIR: fx.store.dir, SITE_TIMEOUT_MS: "2000" };
  // A SQLite store is one server's: the others run on copies of it.
  const other = () => {
    const copy = storeForAnotherServer(fx.store);
    return { DATABASE_URL: copy.url, DATA_DIR: copy.dir };
  };
  [open, limited, proxied] = await Promise.all([
    startApp({ ...base, LOGIN_RATE_LIMIT: "0" }),
    startApp({ ...base, ...other(), LOGIN_RATE_LIMIT: "3" }),
    startApp({ ...base, ...other(), LOGIN_RATE_LIMIT: "3", TRUST_PROXY: "127.0.0.1,10.0.0.0/8" }),
  ]);
});
afterAll(async () => {
  await Promise.all([open, limited, proxied].map((a) => a?.stop()));
  await Promise.all([internal?.close(), redirecting?.close()]);
  await fx?.close();
});

const alice = (siteId = fx.sites.legacy, userId: number | string = ALICE.id) => ({
  userId,
  accessToken: ALICE.token,
  siteId,
});

function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) * 1024;
}

describe("the session cookie", () => {
  it("refuses a seal with anything appended, and stays flat under a flood of 10,000 of them", async () => {
    const { cookie } = await signInOverHttp(open.url, alice());
    expect((await request(open.url, "/api/auth/me", { headers: { cookie } })).status).toBe(200);
    expect((await request(open.url, "/api/auth/me", { headers: { cookie: `${cookie}x` } })).status).toBe(401);

    const flood = async (n: number) => {
      const statuses = new Map<number, number>();
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < n) {
            next++;
            const junk = randomBytes(11 * 1024).toString("base64url"); // ~15 KB
            const res = await fetch(`${open.url}/api/auth/me`, { headers: { cookie: `${cookie}${junk}` } });
            await res.arrayBuffer();
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          }
        }),
      );
      return Object.fromEntries(statuses);
    };
    await flood(500); // warm up: the server's own buffers and JIT
    const before = rssOf(open.pid);
    expect(await flood(10_000)).toEqual({ 401: 10_000 });
    const after = rssOf(open.pid);
    console.log(
      `cookie flood: RSS ${(before / 2 ** 20).toFixed(0)} MB → ${(after / 2 ** 20).toFixed(0)} MB after 10,000 requests`,
    );
    expect(after - before).toBeLessThan(40 * 2 ** 20);
    // The real cookie still works.
    expect((await request(open.url, "/api/auth/me", { headers: { cookie } })).status).toBe(200);
  }, 120_000);

  it("counts no cookie when the name appears twice, whatever the order", async () => {
    const mine = await signInOverHttp(open.url, alice());
    const theirs = await signInOverHttp(open.url, { userId: BOB.id, accessToken: BOB.token, siteId: fx.sites.legacy });
    for (const pair of [`${theirs.cookie}; ${mine.cookie}`, `${mine.cookie}; ${theirs.cookie}`]) {
      expect((await request(open.url, "/api/auth/me", { headers: { cookie: pair } })).status).toBe(401);
    }
  });

  it("over HTTPS reads only the __Host- cookie", async () => {
    // A session on each server (on SQLite each runs on its own copy of the store).
    // Signed in from an address of its own behind the proxy, so no other test's count moves.
    const valueOf = async (url: string) => {
      const res = await request(url, "/api/auth/login", {
        body: alice(),
        headers: { "x-forwarded-for": "198.51.100.77" },
      });
      expect(res.body.success).toBe(true);
      const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      return cookie.slice(cookie.indexOf("=") + 1);
    };
    const behindProxy = await valueOf(proxied.url);
    const direct = await valueOf(open.url);
    const https = { "x-forwarded-proto": "https" };
    // The trusted proxy says the client came over HTTPS: a plain-named cookie does not count.
    expect(
      (await request(proxied.url, "/api/auth/me", { headers: { ...https, cookie: `gd_session=${behindProxy}` } }))
        .status,
    ).toBe(401);
    expect(
      (
        await request(proxied.url, "/api/auth/me", {
          headers: { ...https, cookie: `__Host-gd_session=${behindProxy}` },
        })
      ).status,
    ).toBe(200);
    // A client that is not a trusted proxy cannot claim HTTPS either: the plain name is the one read.
    expect(
      (await request(open.url, "/api/auth/me", { headers: { ...https, cookie: `__Host-gd_session=${direct}` } }))
        .status,
    ).toBe(401);
    expect(
      (await request(open.url, "/api/auth/me", { headers: { ...https, cookie: `gd_session=${direct}` } })).status,
    ).toBe(200);
  });
});

describe("the operator's password", () => {
  it("cannot be guessed without limit when LOGIN_RATE_LIMIT=0: its own limit holds", async () => {
    await setOperatorPassword(fx.store.db, "the operator's long password");
    const statuses = new Map<number, number>();
    for (let i = 0; i < 30; i++) {
      const res = await request(open.url, "/api/admin/login", { body: { password: `guess ${i} of many` } });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    // ADMIN_LOGIN_RATE_LIMIT (5 a minute) answered; the rest refused with 429 (a window may turn once).
    expect(statuses.get(401)).toBeLessThanOrEqual(10);
    expect(statuses.get(429)).toBeGreaterThanOrEqual(20);
  }, 60_000);
});

describe("login CSRF", () => {
  const forms: [string, Record<string, string>][] = [
    ["a foreign Origin and a text/plain body", { origin: "https://evil.example", "content-type": "text/plain" }],
    ["Origin: null", { origin: "null" }],
    ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site" }],
  ];
  for (const [name, headers] of forms) {
    it(`refuses ${name} with 403 and no site call, session or cookie`, async () => {
      const calls = fx.gatewayCalls();
      const rows = await fx.store.db.session.count();
      for (const path of ["/api/auth/login", "/api/trpc/auth.login", "/api/trpc/auth.signIn"]) {
        const res = await request(open.url, path, { body: JSON.stringify(alice()), headers });
        expect(res.headers.get("set-cookie")).toBeNull();
        // tRPC refuses a text/plain body by itself (415) before any procedure runs.
        if (path.startsWith("/api/trpc/") && headers["content-type"] === "text/plain") {
          expect(res.status, path).toBe(415);
          continue;
        }
        expect(res.status, path).toBe(403);
        expect(JSON.stringify(res.body)).toContain("非法的请求来源");
      }
      expect(fx.gatewayCalls()).toBe(calls);
      expect(await fx.store.db.session.count()).toBe(rows);
    });
  }

  it("still signs in a request from the service's own origin, or without Origin", async () => {
    expect(
      (await request(open.url, "/api/auth/login", { body: alice(), headers: { origin: open.url } })).body.success,
    ).toBe(true);
    expect((await request(open.url, "/api/auth/login", { body: alice() })).body.success).toBe(true);
  });
});

describe("one account, however its id is spelled", () => {
  it("shares the account's budget across spellings, and one address cannot lock it out for others", async () => {
    await freshRateWindow();
    const from = (ip: string, userId: number | string) =>
      request(proxied.url, "/api/auth/login", {
        body: { userId, accessToken: "sk-nope", siteId: fx.sites.strict },
        headers: { "x-forwarded-for": ip },
      });
    // Four addresses, four spellings of user 6060: the fourth new address is one too many.
    const spellings = [6060, "06060", "6060.0", "0x17ac"];
    const statuses = [];
    for (const [i, userId] of spellings.entries()) statuses.push((await from(`198.51.100.${i + 1}`, userId)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);

    // One address hammering Alice's account with bad tokens is stopped by its own budget...
    const bad = () =>
      request(proxied.url, "/api/auth/login", {
        body: { userId: ALICE.id, accessToken: "sk-nope", siteId: fx.sites.legacy },
        headers: { "x-forwarded-for": "203.0.113.66" },
      });
    const hammer = [];
    for (let i = 0; i < 6; i++) hammer.push((await bad()).status);
    expect(hammer).toEqual([200, 200, 200, 429, 429, 429]);
    // ...and Alice still signs in from elsewhere.
    const elsewhere = await request(proxied.url, "/api/auth/login", {
      body: { userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.legacy },
      headers: { "x-forwarded-for": "192.0.2.10" },
    });
    expect(elsewhere.body.success).toBe(true);
  });
});

describe("trusted proxies", () => {
  it("take X-Forwarded-For only from the listed proxies, right to left", async () => {
    await freshRateWindow();
    const attempt = (xff: string) =>
      request(proxied.url, "/api/auth/login", {
        body: { userId: 1, accessToken: "x", siteId: 99_999 },
        headers: { "x-forwarded-for": xff },
      });
    // 10.1.2.3 is a trusted inner proxy: the client is the hop left of it; the forged left-most hop never counts.
    const chain = [];
    for (let i = 0; i < 4; i++) chain.push((await attempt(`6.6.6.${i}, 203.0.113.200, 10.1.2.3`)).status);
    expect(chain).toEqual([200, 200, 200, 429]);
    // Without a trusted proxy in front (the open server trusts none), the header is ignored: the socket counts.
    const direct = [];
    for (let i = 0; i < 4; i++) {
      const res = await request(limited.url, "/api/auth/login", {
        body: { userId: 1, accessToken: "x", siteId: 99_999 },
        headers: { "x-forwarded-for": `203.0.113.${i}` },
      });
      direct.push(res.status);
    }
    expect(direct).toEqual([200, 200, 200, 429]);
  });

  it("group IPv6 clients by their /64", async () => {
    await freshRateWindow();
    const attempt = (ip: string) =>
      request(proxied.url, "/api/auth/login", {
        body: { userId: 2, accessToken: "x", siteId: 99_999 },
        headers: { "x-forwarded-for": ip },
      });
    const same64 = [];
    for (let i = 1; i <= 4; i++) same64.push((await attempt(`2001:db8:1:2::${i.toString(16)}`)).status);
    expect(same64).toEqual([200, 200, 200, 429]);
    expect((await attempt("2001:db8:1:3::1")).status).toBe(200);
  });
});

describe("one request cannot stop everyone", () => {
  it("answers the health check at once while the largest import a workspace may send is refused", async () => {
    const made = await request(open.url, "/api/workspace/register", {
      body: { name: "大文件导入", password: "correct horse battery" },
    });
    const token = (made.body.data as { token: string }).token;
    // As many accounts as 4 MiB holds (an All API Hub file), ordered by a list as long.
    const rows: unknown[] = [];
    const ordered: string[] = [];
    let size = 0;
    for (let i = 0; size < 3.9 * 1024 * 1024; i++) {
      const row = { id: `a${i}`, site_url: "https://x.example", account_info: { id: i + 1, access_token: "t" } };
      size += JSON.stringify(row).length + 6 + String(i).length;
      rows.push(row);
      ordered.push(`a${(rows.length * 7919) % 100_003}`);
    }
    const body = JSON.stringify({ accounts: { accounts: rows, orderedAccountIds: ordered.reverse() } });
    expect(body.length).toBeLessThan(4 * 1024 * 1024);
    const importing = request(open.url, "/api/workspace/import", {
      body,
      headers: { authorization: `Bearer ${token}` },
    });
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect((await fetch(`${open.url}/api/health`)).status).toBe(200);
      waits.push(performance.now() - started);
    }
    const answer = await importing;
    expect(answer.body).toEqual({ success: false, message: "一次最多导入 200 个账户" });
    // Every health check answered within a second (one import took 40 s of the event loop before).
    expect(Math.max(...waits)).toBeLessThan(1000);
  });
});

describe("tRPC batches", () => {
  it("answers more than 10 calls in one request with a clear 400, and serves 10", async () => {
    const batch = (n: number) => request(open.url, `/api/trpc/${Array(n).fill("site.list").join(",")}?batch=1`);
    expect((await batch(10)).status).toBe(200);
    const tooMany = await batch(1600);
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body)).toContain("一次请求包含的调用过多（最多 10 个）");
  });
});

describe("calls to a site", () => {
  it("do not follow redirects, so a site cannot bounce the server to an internal address", async () => {
    const res = await request(open.url, "/api/auth/login", { body: alice(redirectingSite) });
    expect(res.body).toEqual({ success: false, message: "无法连接站点: 站点返回了重定向" });
    expect(redirecting.requests.length).toBeGreaterThan(0);
    expect(internal.requests).toEqual([]);
  });
});

describe("response headers", () => {
  it("API answers refuse framing, sniffing and every content source", async () => {
    const res = await request(open.url, "/api/auth/me");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  });
});
