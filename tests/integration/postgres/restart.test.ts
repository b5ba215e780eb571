import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningGateway } from "../../../src/demo/gateway";
import { closeDb, createDb, type Db } from "../../../src/server/db/client";
import { migratePostgres } from "../../../src/server/db/migrate";
import { siteRegistry } from "../../../src/server/sites/registry";
import { ALICE, startLegacyGateway } from "../../support/gateway";
import { startPrivatePostgres, type PrivatePostgres } from "../../support/private-postgres";
import { startApp, type RunningApp } from "../../support/server";
import { signInOverHttp } from "../../support/http";

let pgServer: PrivatePostgres;
let gateway: RunningGateway;
let db: Db;
let app: RunningApp;
let siteId: number;

beforeAll(async () => {
  pgServer = await startPrivatePostgres();
  await migratePostgres(pgServer.url);
  gateway = await startLegacyGateway();
  db = createDb(pgServer.url);
  siteId = (await siteRegistry(db).add({ name: "站点", url: gateway.url })).id;
  app = await startApp({ DATABASE_URL: pgServer.url, LOGIN_RATE_LIMIT: "5", DB_TIMEOUT_MS: "2000" });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  if (db) await closeDb(db);
  await gateway?.close();
  pgServer?.destroy();
});

type Sample = { status: number; ms: number; body: unknown };

async function me(token: string): Promise<Sample> {
  const started = Date.now();
  try {
    const res = await fetch(`${app.url}/api/auth/me`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, ms: Date.now() - started, body: await res.json() };
  } catch (error) {
    return { status: -1, ms: Date.now() - started, body: String(error) };
  }
}

async function login(): Promise<string> {
  return (await signInOverHttp(app.url, { userId: ALICE.id, accessToken: ALICE.token, siteId })).token;
}

describe("a PostgreSQL restart during traffic", () => {
  it("costs clear JSON errors while it is down, and full service after, with no session lost", async () => {
    const token = await login();
    expect((await me(token)).status).toBe(200);

    const samples: Sample[] = [];
    let running = true;
    const traffic = (async () => {
      while (running) samples.push(await me(token));
    })();

    await new Promise((r) => setTimeout(r, 300));
    pgServer.stop();
    const downFrom = samples.length;
    await new Promise((r) => setTimeout(r, 2_000));
    const downTo = samples.length;
    pgServer.start();

    let recovered: Sample | undefined;
    for (let i = 0; i < 60; i++) {
      const s = await me(token);
      if (s.status === 200) {
        recovered = s;
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    running = false;
    await traffic;

    const down = samples.slice(downFrom, downTo);
    expect(down.length).toBeGreaterThan(0);
    expect(down.some((s) => s.status === 503)).toBe(true);
    for (const s of samples) {
      expect([200, 503]).toContain(s.status);
      expect(s.ms).toBeLessThan(5_000);
      if (s.status === 503) expect(s.body).toEqual({ success: false, message: "数据库暂时不可用，请稍后再试" });
    }
    expect(recovered?.status).toBe(200);
    expect((await me(await login())).status).toBe(200);
    expect((await me(token)).status).toBe(200);
  }, 90_000);
});
