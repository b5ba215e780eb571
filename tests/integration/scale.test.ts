import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { freePort, startApp, type RunningApp } from "../support/server";
import { tempSqlite, type TempDb } from "../support/db";
import { request } from "../support/http";

/**
 * The background work reads due work in bounded batches, whatever the deployment's size: with
 * 200,000 live sessions in the store (written directly, as a restore would), a server on a 192 MB
 * heap whose runner looks every second stays up and ready, and its memory stays flat.
 */

const SESSIONS = 200_000;
let store: TempDb | undefined;
let app: RunningApp | undefined;
afterAll(async () => {
  await app?.stop();
  await store?.cleanup();
});

/** The text form Prisma's SQLite adapter writes for a DateTime. */
const sqliteTime = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

describe("a deployment grown large", () => {
  it("200,000 live sessions: the runner works on a bounded batch, the server stays up with flat memory", async () => {
    store = tempSqlite();
    // A site nobody answers at: every sync fails at once, so the runner goes on looking.
    const siteId = (await siteRegistry(store.db).add({ name: "大站", url: `http://127.0.0.1:${await freePort()}` })).id;
    const { url } = (await siteRegistry(store.db).list())[0]!;
    const file = store.url.replace(/^file:/, "");
    const raw = new Database(file);
    const now = Date.now();
    const insertSession = raw.prepare(
      "INSERT INTO sessions (id, user_id, site_user_id, access_token, site_id, site_url, user_info, created_at, expires_at, credential) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
    );
    const insertDue = raw.prepare(
      "INSERT INTO ledger_due (site_id, site_user_id, due_at, failures) VALUES (?, ?, ?, 0)",
    );
    raw.transaction(() => {
      for (let i = 1; i <= SESSIONS; i++) {
        const userInfo = JSON.stringify({ id: i, username: `user-${i}`, display_name: `用户 ${i}`, quota: 5_000_000 });
        insertSession.run(
          hashToken(`session-${i}`),
          String(i),
          i,
          "sealed-token-that-no-password-opens",
          siteId,
          url,
          userInfo,
          sqliteTime(now - 60_000),
          sqliteTime(now + 20 * 3600_000),
        );
        insertDue.run(siteId, i, sqliteTime(now - 60_000 + (i % 1000)));
      }
    })();
    raw.close();

    app = await startApp({
      DATABASE_URL: store.url,
      DATA_DIR: store.dir,
      SESSION_PASSWORD: "scale-test-session-password-0123456789",
      NODE_OPTIONS: "--max-old-space-size=192",
      LEDGER_SYNC_MINUTES: "1",
      JOB_TICK_SECONDS: "1",
    });
    const rss: number[] = [];
    for (let second = 0; second < 25; second++) {
      await new Promise((r) => setTimeout(r, 1000));
      const ready = await request(app.url, "/api/ready");
      expect(ready.status, app.output().slice(-2000)).toBe(200);
      rss.push(rssMb(app.pid));
    }
    // The runner worked: accounts were claimed and synced (each failed, and waits before its next try).
    const check = new Database(file, { readonly: true });
    const tried = check.prepare("SELECT count(*) AS n FROM ledger_due WHERE failures > 0").get() as { n: number };
    check.close();
    expect(tried.n).toBeGreaterThan(0);
    expect(tried.n).toBeLessThan(SESSIONS);
    // Flat: the last ten seconds no higher than the first ten's peak by more than a little.
    const early = Math.max(...rss.slice(0, 10));
    const late = Math.max(...rss.slice(-10));
    console.log(`RSS ${rss.map((r) => r.toFixed(0)).join(" ")} MB; ${tried.n} accounts tried`);
    expect(late).toBeLessThan(early * 1.25);
    expect(app.output()).not.toContain("heap out of memory");
  }, 120_000);
});
