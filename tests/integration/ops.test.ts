import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { beat } from "../../src/server/core/heartbeat";
import { freshProcessState } from "../../src/server/core/process-state";
import { callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";
import { startApp, type RunningApp } from "../support/server";

/**
 * /api/health and /api/ready: the process answers; the instance can serve (store reachable,
 * migrated and writable, job runner ticking, heap not full), and says why when it cannot.
 */

describe("readiness in process", () => {
  it("is ready on a migrated store, and says when the runner stopped or a migration is missing", async () => {
    const store = await tempStore();
    try {
      freshProcessState();
      const { api } = callerFor(store.db);
      const ok = await api.ops.ready();
      expect(ok).toMatchObject({ ready: true, reasons: [], checks: { store: "ok" } });
      expect(["ok", "starting"]).toContain(ok.checks.jobs);

      // The runner beat last ten minutes ago: stopped.
      beat("ledger.syncs", Date.now() - 600_000);
      const stale = await api.ops.ready();
      expect(stale.ready).toBe(false);
      expect(stale.reasons).toEqual([expect.stringMatching(/^后台任务已 (599|600|601) 秒没有运行$/) as unknown]);
      beat("ledger.syncs");
      expect((await api.ops.ready()).ready).toBe(true);

      // A migration of this build not applied.
      const [last] = await store.db.$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT "id" FROM "_prisma_migrations" ORDER BY "migration_name" DESC LIMIT 1`,
      );
      await store.db.$executeRawUnsafe(`DELETE FROM "_prisma_migrations" WHERE "id" = '${last?.id ?? ""}'`);
      const behind = await api.ops.ready();
      expect(behind.ready).toBe(false);
      expect(behind.checks.store).toMatch(/^数据库迁移未完成（已应用 (\d+) \/ (\d+)）$/);
    } finally {
      await store.cleanup();
    }
  });
});

describe("over HTTP", () => {
  let store: TempDb;
  let app: RunningApp;
  beforeAll(async () => {
    store = await tempStore();
    app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await store?.cleanup();
  });

  it("answers health and readiness without a session, no-store, nothing secret", async () => {
    const health = await fetch(`${app.url}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok" });
    const ready = await fetch(`${app.url}/api/ready`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
    const body = (await ready.json()) as { ready: boolean; checks: { store: string } };
    expect(body).toMatchObject({ ready: true, checks: { store: "ok" } });
    expect(JSON.stringify(body)).not.toMatch(/file:|postgres:|password/i);
  });
});
