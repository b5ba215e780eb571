import { spawnSync } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratePostgres } from "../../../src/server/db/migrate";
import { closeDb, createDb } from "../../../src/server/db/client";
import { purgeExpiredSessions } from "../../../src/server/jobs/purge";
import { sessionStore } from "../../../src/server/session/store";
import { readMigrations, POSTGRES_MIGRATIONS_DIR } from "../../../src/server/db/migrate";
import { throwawayPostgres } from "../../support/db";
import { ALICE, BOB } from "../../support/gateway";
import { ROOT, startApp, type RunningApp } from "../../support/server";
import { startFixture, type Fixture } from "../../support/suite";
import { freshRateWindow, signInOverHttp } from "../../support/http";

let fx: Fixture;
let a: RunningApp;
let b: RunningApp;

beforeAll(async () => {
  fx = await startFixture();
  const env = { DATABASE_URL: fx.store.url, DATA_DIR: fx.store.dir, LOGIN_RATE_LIMIT: "0" };
  [a, b] = await Promise.all([startApp(env), startApp(env)]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await fx?.close();
});

const login = (app: RunningApp, user = ALICE) =>
  signInOverHttp(app.url, { userId: user.id, accessToken: user.token, siteId: fx.sites.legacy });
const me = (app: RunningApp, headers: Record<string, string>) =>
  fetch(`${app.url}/api/auth/me`, { headers }).then((r) => r.status);

describe("two instances on one PostgreSQL", () => {
  it("share sessions: made on one, valid and ended on the other", async () => {
    const { token, cookie } = await login(a);
    expect(await me(b, { authorization: `Bearer ${token}` })).toBe(200);
    expect(await me(b, { cookie })).toBe(200);
    const out = await fetch(`${b.url}/api/auth/logout`, { method: "POST", headers: { cookie } });
    expect(out.status).toBe(200);
    expect(await me(a, { authorization: `Bearer ${token}` })).toBe(401);
    expect(await me(a, { cookie })).toBe(401);
  });

  it("serve 60 concurrent logins spread over both", async () => {
    const sessions = await Promise.all(Array.from({ length: 60 }, (_, i) => login(i % 2 ? a : b, i % 3 ? ALICE : BOB)));
    expect(new Set(sessions.map((s) => s.token)).size).toBe(60);
    const statuses = await Promise.all(
      sessions.map((s, i) => me(i % 2 ? b : a, { authorization: `Bearer ${s.token}` })),
    );
    expect(statuses).toEqual(Array(60).fill(200));
  });

  it("count sign-in attempts across instances", async () => {
    const env = { DATABASE_URL: fx.store.url, DATA_DIR: fx.store.dir, LOGIN_RATE_LIMIT: "3", TRUST_PROXY: "127.0.0.1" };
    const [x, y] = await Promise.all([startApp(env), startApp(env)]);
    try {
      await freshRateWindow();
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${(i % 2 ? x : y).url}/api/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": `192.0.2.${i}` },
          body: JSON.stringify({ userId: 777, accessToken: "sk-nope", siteId: fx.sites.legacy }),
        });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await Promise.all([x.stop(), y.stop()]);
    }
  });
});

describe("many instances starting at once", () => {
  it("apply each migration exactly once", async () => {
    const { url, drop } = await throwawayPostgres();
    try {
      const results = await Promise.all(Array.from({ length: 6 }, () => migratePostgres(url)));
      const names = readMigrations(POSTGRES_MIGRATIONS_DIR).map((m) => m.name);
      expect(results.flat().sort()).toEqual(names.sort());
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "_prisma_migrations"`);
      await client.end();
      expect(Number(rows[0]?.n)).toBe(names.length);
    } finally {
      await drop();
    }
  });

  it("purge expired sessions safely from several at once", async () => {
    const past = new Date(Date.now() - 1000);
    await fx.store.db.session.createMany({
      data: Array.from({ length: 3000 }, (_, i) => ({
        id: `old-${i}`,
        userId: "1",
        siteUserId: 1,
        accessToken: "x",
        siteId: 1,
        siteUrl: "http://x",
        userInfo: "{}",
        createdAt: past,
        expiresAt: past,
      })),
    });
    const clients = Array.from({ length: 3 }, () => createDb(fx.store.url));
    try {
      const counts = await Promise.all(clients.map((c) => purgeExpiredSessions(sessionStore(c))));
      expect(counts.reduce((x, y) => x + y, 0)).toBe(3000);
      expect(await fx.store.db.session.count({ where: { expiresAt: { lte: new Date() } } })).toBe(0);
    } finally {
      await Promise.all(clients.map((c) => closeDb(c)));
    }
  });

  it("refuse to start on PostgreSQL without an explicit SESSION_PASSWORD", () => {
    const res = spawnSync(process.execPath, [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/start.ts"], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: fx.store.url, SESSION_PASSWORD: "", PORT: "1" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("SESSION_PASSWORD: 使用 PostgreSQL 时必须显式设置");
  });
});
