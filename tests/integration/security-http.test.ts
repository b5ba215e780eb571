import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALICE, BOB } from "../support/gateway";
import { startApp, type RunningApp } from "../support/server";
import { storeForAnotherServer } from "../support/db";
import { startFixture, type Fixture } from "../support/suite";
import { freshRateWindow, signInOverHttp } from "../support/http";

let fx: Fixture;
let limited: RunningApp;
let proxied: RunningApp;
let open: RunningApp;

beforeAll(async () => {
  fx = await startFixture();
  const base = { DATABASE_URL: fx.store.url, DATA_DIR: fx.store.dir, SITE_TIMEOUT_MS: "2000" };
  // A SQLite store is one server's: the others run on copies of it.
  const other = () => {
    const copy = storeForAnotherServer(fx.store);
    return { DATABASE_URL: copy.url, DATA_DIR: copy.dir };
  };
  [limited, proxied, open] = await Promise.all([
    startApp({ ...base, LOGIN_RATE_LIMIT: "3" }),
    startApp({ ...base, ...other(), LOGIN_RATE_LIMIT: "3", TRUST_PROXY: "127.0.0.1" }),
    startApp({ ...base, ...other(), LOGIN_RATE_LIMIT: "0" }),
  ]);
});
afterAll(async () => {
  await Promise.all([limited, proxied, open].map((a) => a?.stop()));
  await fx?.close();
});

async function post(app: RunningApp, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${app.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}
const get = async (app: RunningApp, path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${app.url}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const signIn = (app: RunningApp, user = ALICE) =>
  signInOverHttp(app.url, { userId: user.id, accessToken: user.token, siteId: fx.sites.legacy });

const RATE_LIMITED = { success: false, message: "登录尝试过于频繁，请稍后再试" };

describe("sign-in rate limit", () => {
  it("answers 429 with Retry-After past the per-minute budget of a client address, whatever X-Forwarded-For says", async () => {
    await freshRateWindow();
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 5; i++) {
      // A different user each time and a forged forwarding header: the socket address still counts.
      last = await post(
        limited,
        "/api/auth/login",
        { userId: 1000 + i, accessToken: "sk-nope", siteId: fx.sites.legacy },
        { "x-forwarded-for": `203.0.113.${i}` },
      );
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(last?.body).toEqual(RATE_LIMITED);
    const retryAfter = Number(last?.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The tRPC endpoint shares the budget.
    const trpc = await post(limited, "/api/trpc/auth.login", { userId: 1, accessToken: "x", siteId: 1 });
    expect(trpc.status).toBe(429);
    expect(JSON.stringify(trpc.body)).toContain("登录尝试过于频繁，请稍后再试");
  });

  it("behind a trusted proxy, counts each forwarded client apart and each site + user id across clients", async () => {
    const attempt = (ip: string, userId: number) =>
      post(
        proxied,
        "/api/auth/login",
        { userId, accessToken: "sk-nope", siteId: fx.sites.strict },
        { "x-forwarded-for": ip },
      );
    await freshRateWindow();
    const sameUser = [];
    for (let i = 0; i < 4; i++) sameUser.push((await attempt(`198.51.100.${i}`, 4242)).status);
    expect(sameUser).toEqual([200, 200, 200, 429]);
    expect((await attempt("198.51.100.200", 4343)).status).toBe(200);
    // The right-most entry is the one the trusted proxy appended; a forged left part changes nothing.
    const sameClient = [];
    for (let i = 0; i < 4; i++) sameClient.push((await attempt(`10.9.9.${i}, 192.0.2.77`, 5000 + i)).status);
    expect(sameClient).toEqual([200, 200, 200, 429]);
  });

  it("is off with LOGIN_RATE_LIMIT=0", async () => {
    for (let i = 0; i < 30; i++) {
      const res = await post(open, "/api/auth/login", { userId: 7, accessToken: "sk-nope", siteId: fx.sites.legacy });
      expect(res.status).toBe(200);
    }
  });
});

describe("CSRF over HTTP", () => {
  it("refuses a cross-origin cookie logout with 403 and keeps the session", async () => {
    const { cookie } = await signIn(open);
    const res = await post(open, "/api/auth/logout", "", { cookie, origin: "https://evil.example" });
    expect(res).toMatchObject({ status: 403, body: { success: false, message: "非法的请求来源" } });
    expect((await get(open, "/api/auth/me", { cookie })).status).toBe(200);
    const trpc = await post(open, "/api/trpc/session.revokeOthers", "", { cookie, origin: "https://evil.example" });
    expect(trpc.status).toBe(403);
    expect(JSON.stringify(trpc.body)).toContain("非法的请求来源");
    // The browser's own origin passes.
    expect((await post(open, "/api/auth/logout", "", { cookie, origin: open.url })).status).toBe(200);
    expect((await get(open, "/api/auth/me", { cookie })).status).toBe(401);
  });

  it("does not check Bearer requests", async () => {
    const { token } = await signIn(open);
    const res = await post(open, "/api/auth/logout", "", {
      authorization: `Bearer ${token}`,
      origin: "https://evil.example",
    });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
  });
});

describe("concurrency", () => {
  it("gives 100 simultaneous logins 100 distinct working sessions", async () => {
    const results = await Promise.all(Array.from({ length: 100 }, () => signIn(open, BOB)));
    const tokens = new Set(results.map((r) => r.token));
    expect(tokens.size).toBe(100);
    const checks = await Promise.all(
      results.map((r) => get(open, "/api/auth/me", { authorization: `Bearer ${r.token}` })),
    );
    expect(checks.map((c) => c.status)).toEqual(Array(100).fill(200));
  });

  it("never answers 500 to simultaneous logout and me on one session", async () => {
    const sessions = await Promise.all(Array.from({ length: 20 }, () => signIn(open)));
    const answers = await Promise.all(
      sessions.flatMap(({ token }) => {
        const auth = { authorization: `Bearer ${token}` };
        return [
          post(open, "/api/auth/logout", "", auth),
          get(open, "/api/auth/me", auth),
          post(open, "/api/auth/logout", "", auth),
          get(open, "/api/auth/me", auth),
        ];
      }),
    );
    for (const a of answers) expect([200, 401]).toContain(a.status);
    for (const { token } of sessions) {
      expect((await get(open, "/api/auth/me", { authorization: `Bearer ${token}` })).status).toBe(401);
    }
  });
});

describe("raw bodies", () => {
  it("answers every random body with a JSON envelope and keeps serving", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 300 }), async (raw) => {
        const res = await post(open, "/api/auth/login", raw);
        expect(res.status).toBe(200);
        expect(res.body.success).toBe(false);
        expect(typeof res.body.message).toBe("string");
      }),
      { numRuns: 150 },
    );
    expect((await signIn(open)).token).toMatch(/^[0-9a-f-]{36}$/);
  });
});
