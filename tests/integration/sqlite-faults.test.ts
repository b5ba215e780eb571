import { execFileSync, spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../src/demo/gateway";
import { closeDb, createDb } from "../../src/server/db/client";
import { migrateSqlite } from "../../src/server/db/migrate";
import { demoHistory } from "../../src/demo/history";
import { storeProblem } from "../../src/server/db/health";
import { syncDueLedgers } from "../../src/server/jobs/ledger";
import { releaseLeftLeases } from "../../src/server/jobs/leases";
import { siteRegistry } from "../../src/server/sites/registry";
import { signInWith } from "../support/caller";
import { request } from "../support/http";
import { ROOT, startApp, type RunningApp } from "../support/server";

/**
 * SQLite is one process's, and loses nothing in silence: a second server on the same file is
 * refused at start; a database missing where the data folder remembers one stops the start; a
 * full disk answers 503 存储空间不足 (never blaming the site) and everything works again once
 * space returns; a file deleted under the running server makes every request a 503.
 */

const closers: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const SESSION_PASSWORD = "sqlite-faults-session-password-0123456789";
const USER = { accessToken: "sk-faults-0123456789abcdef", data: newApiUser(61, { username: "faults" }), logs: [] };

/** A data folder with a migrated database in it (in `dir`, or a new temporary folder). */
function store(dir = mkdtempSync(path.join(tmpdir(), "gd-faults-"))) {
  const file = path.join(dir, "dashboard.db");
  const url = `file:${file}`;
  migrateSqlite(url);
  return { dir, file, url };
}

async function app(s: { dir: string; url: string }): Promise<RunningApp> {
  const running = await startApp({ DATABASE_URL: s.url, DATA_DIR: s.dir, SESSION_PASSWORD });
  closers.push(() => running.stop());
  return running;
}

/** The server run as `npm start` runs it, to its exit: its output and exit code. */
function serveOnce(env: Record<string, string>): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: "0", SESSION_PASSWORD },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

async function siteWithUser(): Promise<RunningGateway> {
  const site = await startGateway({ family: "new-api", users: [USER] });
  closers.push(() => site.close());
  return site;
}

const signIn = (base: string, siteId: number) =>
  request(base, "/api/auth/login", { body: { siteId, userId: 61, accessToken: USER.accessToken } });

describe("SQLite: one process", () => {
  it("refuses a second server on the same database at start, and takes over the lock of one that died", async () => {
    const s = store();
    const first = await app(s);
    const second = serverOnce({ DATABASE_URL: s.url, DATA_DIR: s.dir });
    expect(second.status).toBe(1);
    expect(second.output).toContain(`数据库 ${s.file} 正由另一个进程（pid ${first.pid}）使用`);
    // Killed outright, it leaves its lock: the next server takes it over at once.
    await first.kill();
    expect(existsSync(`${s.file}.lock`)).toBe(true);
    const next = await app(s);
    expect((await request(next.url, "/api/ready")).status).toBe(200);
  });
});

/** A store on a small filesystem of its own (a 6 MB tmpfs: root may mount one), unmounted after. */
function storeOnSmallDisk() {
  const mount = mkdtempSync(path.join(tmpdir(), "gd-full-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=6m", "tmpfs", mount]);
  closers.push(() => void execFileSync("umount", ["-l", mount]));
  mkdirSync(path.join(mount, "data"));
  return { mount, s: store(path.join(mount, "data")) };
}

/** The production server started on a store, to its exit (it is refused): its output and exit code. */
function serverOnce(env: Record<string, string>): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [".next/gd-server.mjs"], {
    cwd: ROOT,
    env: { ...process.env, SESSION_PASSWORD, PORT: "0", NODE_ENV: "production", ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("SQLite: one file, however it is named", () => {
  it("refuses a second server that opens the same file through a symlink or a second hard link", async () => {
    const s = store();
    const first = await app(s);
    const linked = path.join(mkdtempSync(path.join(tmpdir(), "gd-link-")), "via-link.db");
    symlinkSync(s.file, linked);
    const bySymlink = serverOnce({ DATABASE_URL: `file:${linked}`, DATA_DIR: path.dirname(linked) });
    expect(bySymlink.status).toBe(1);
    expect(bySymlink.output).toContain(`正由另一个进程（pid ${first.pid}）使用`);
    const hard = path.join(s.dir, "same-file.db");
    linkSync(s.file, hard);
    const byHardLink = serverOnce({ DATABASE_URL: `file:${hard}`, DATA_DIR: s.dir });
    expect(byHardLink.status).toBe(1);
    expect(byHardLink.output).toContain(`正由另一个进程（pid ${first.pid}）使用`);
    expect((await request(first.url, "/api/ready")).status).toBe(200);
  });
});

describe("SQLite: no silent loss", () => {
  it("a sites command after the database was deleted makes no file, and the next start is still refused", async () => {
    const s = store();
    const ran = await app(s);
    await ran.stop();
    for (const f of [s.file, `${s.file}-wal`, `${s.file}-shm`]) rmSync(f, { force: true });
    const listed = spawnSync(process.execPath, ["--import", "tsx", "scripts/sites.ts", "list"], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: s.url, DATA_DIR: s.dir, SESSION_PASSWORD },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(listed.status).toBe(1);
    expect(listed.stderr).toContain(`数据库文件 ${s.file} 不存在，但 ${s.dir} 中记录着之前安装的这个数据库`);
    expect(existsSync(s.file)).toBe(false);
    // An empty file left where the database was (by any other tool) is refused the same way.
    writeFileSync(s.file, "");
    const started = serveOnce({ DATABASE_URL: s.url, DATA_DIR: s.dir });
    expect(started.status).toBe(1);
    expect(started.output).toContain(`数据库文件 ${s.file} 是空的，但 ${s.dir} 中记录着之前安装的这个数据库`);
    expect(statSync(s.file).size).toBe(0);
  });

  it("will not start on an empty database where the data folder remembers one", async () => {
    const s = store();
    // A server ran on it once: the data folder remembers the database.
    const ran = await app(s);
    await ran.stop();
    rmSync(s.file);
    rmSync(`${s.file}-wal`, { force: true });
    rmSync(`${s.file}-shm`, { force: true });
    const started = serveOnce({ DATABASE_URL: s.url, DATA_DIR: s.dir });
    expect(started.status).toBe(1);
    expect(started.output).toContain(`数据库文件 ${s.file} 不存在，但 ${s.dir} 中记录着之前安装的这个数据库`);
    expect(existsSync(s.file)).toBe(false);
  });

  it("answers 503 for everything once the database file is deleted under the running server", async () => {
    const s = store();
    const site = await siteWithUser();
    const db = createDb(s.url);
    const { id } = await siteRegistry(db).add({ name: "删库站", url: site.url });
    await closeDb(db);
    const running = await app(s);
    expect((await signIn(running.url, id)).body.success).toBe(true);
    rmSync(s.file);
    const after = await signIn(running.url, id);
    expect(after.status).toBe(503);
    expect(after.body.message).toBe(`数据库文件 ${s.file} 已被删除，请从备份恢复后重启服务`);
    const ready = await request(running.url, "/api/ready");
    expect(ready.status).toBe(503);
    expect(ready.body.reasons).toEqual([`数据库文件 ${s.file} 已被删除`]);
  });

  it("answers 503 存储空间不足 on a full disk, half-writes nothing, and works again when space returns", async () => {
    const { mount, s } = storeOnSmallDisk();
    const site = await siteWithUser();
    const db = createDb(s.url);
    const { id } = await siteRegistry(db).add({ name: "满盘站", url: site.url });
    await closeDb(db);
    const running = await app(s);
    const first = await signIn(running.url, id);
    expect(first.body.success).toBe(true);
    const bearer = { authorization: `Bearer ${(first.body.data as { sessionToken: string }).sessionToken}` };
    // Fill the disk to its last byte.
    const filler = path.join(mount, "filler");
    try {
      writeFileSync(filler, Buffer.alloc(8 * 1024 * 1024));
    } catch {
      // ENOSPC: full now, as wanted.
    }
    const sessionsBefore = await request(running.url, "/api/ready");
    expect(sessionsBefore.status).toBe(503);
    expect(sessionsBefore.body.reasons).toEqual(["存储空间不足：数据库无法写入"]);
    const refused = await signIn(running.url, id);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ success: false, message: "存储空间不足，请联系管理员释放磁盘空间" });
    // A ledger sync asked for meanwhile cannot write (it runs in the background and fails).
    await request(running.url, "/api/usage/sync", { body: {}, headers: bearer });
    const status = async () =>
      (await request(running.url, "/api/usage/status", { headers: bearer })).body.data as {
        running: boolean;
        lastError: string | null;
        syncedAt: string | null;
      };
    for (let i = 0; i < 50 && (await status().catch(() => ({ running: true }))).running; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    // Space returns: sign-ins work again, and so does everything after them.
    rmSync(filler);
    const again = await signIn(running.url, id);
    expect(again.body.success).toBe(true);
    expect((await request(running.url, "/api/ready")).status).toBe(200);
    // The sync that failed holds nothing up: the next one runs and ends.
    const sync = await request(running.url, "/api/usage/sync", { body: {}, headers: bearer });
    expect(sync.status, JSON.stringify(sync.body)).toBe(200);
    let now = await status();
    for (let i = 0; i < 100 && (now.running || now.syncedAt === null); i++) {
      await new Promise((r) => setTimeout(r, 100));
      now = await status();
    }
    expect(now).toMatchObject({ running: false, lastError: null });
    expect(now.syncedAt).not.toBeNull();
    // Nothing half written: the sign-in refused left no session.
    const check = createDb(s.url);
    expect(await check.session.count()).toBe(2);
    await closeDb(check);
  });
});

describe("SQLite: a disk filling up under sign-ins", () => {
  it("answers each sign-in a session or 503 存储空间不足, and keeps exactly the sessions it answered", async () => {
    const { mount, s } = storeOnSmallDisk();
    const users = Array.from({ length: 95 }, (_, i) => ({
      accessToken: `sk-filling-${String(i).padStart(4, "0")}-0123456789abcdef`,
      data: newApiUser(500 + i, { username: `filling${i}` }),
      logs: [],
    }));
    const site = await startGateway({ family: "new-api", users });
    closers.push(() => site.close());
    const db = createDb(s.url);
    const { id } = await siteRegistry(db).add({ name: "渐满站", url: site.url });
    await closeDb(db);
    const running = await app(s);
    // Room for some sign-ins, taken away a little at a time while they come, four at once.
    const { bavail, bsize } = statfsSync(mount);
    const filler = path.join(mount, "filler");
    writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 512 * 1024)));
    let filling = true;
    const fill = (async () => {
      while (filling) {
        try {
          appendFileSync(filler, Buffer.alloc(8 * 1024));
        } catch {
          // Full: the sign-ins meet it now.
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const answers: Array<{ status: number; message: unknown; ok: boolean }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < users.length) {
          const u = users[next++]!;
          const res = await request(running.url, "/api/auth/login", {
            body: { siteId: id, userId: Number(u.data.id), accessToken: u.accessToken },
          });
          answers.push({ status: res.status, message: res.body.message, ok: res.body.success === true });
        }
      }),
    );
    filling = false;
    await fill;
    const refused = answers.filter((a) => !a.ok);
    expect(refused.length).toBeGreaterThan(0);
    // Never the site's fault: the store's, in its own words.
    for (const a of refused)
      expect(a).toEqual({ status: 503, message: "存储空间不足，请联系管理员释放磁盘空间", ok: false });
    rmSync(filler);
    const check = createDb(s.url);
    expect(await check.session.count()).toBe(answers.filter((a) => a.ok).length);
    expect(await check.ledgerDue.count()).toBe(answers.filter((a) => a.ok).length);
    await closeDb(check);
  });
});

describe("SQLite: a sign-in's second write failing", () => {
  it("keeps no session when the sync it owes cannot be written, and never blames the site", async () => {
    const s = store();
    const site = await siteWithUser();
    const db = createDb(s.url);
    const { id } = await siteRegistry(db).add({ name: "半写站", url: site.url });
    // The session row is written; the owed sync's row is refused (as a store failing between them).
    await db.$executeRawUnsafe(
      "CREATE TRIGGER due_refused BEFORE INSERT ON ledger_due BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    await closeDb(db);
    const running = await app(s);
    const refused = await signIn(running.url, id);
    expect(refused.status).toBe(500);
    expect(refused.body).toEqual({ success: false, message: "服务器内部错误，请稍后再试" });
    const check = createDb(s.url);
    expect(await check.session.count()).toBe(0);
    expect(await check.ledgerDue.count()).toBe(0);
    await closeDb(check);
  });
});

describe("SQLite: a full disk is the store's fault, not the site's", () => {
  it("a sync the full disk failed goes on at the next look once space returns, and readiness says what the commit met", async () => {
    const { mount, s } = storeOnSmallDisk();
    const now = Math.floor(Date.now() / 1000) - 120;
    const history = demoHistory({ seed: 41, days: 20, callsPerDay: 200, now });
    const user = {
      accessToken: "sk-full-runner-0123456789abcdef",
      data: newApiUser(62, { username: "full" }),
      logs: history.logs,
      tokens: history.tokens,
    };
    const site = await startGateway({ family: "new-api", users: [user] });
    closers.push(() => site.close());
    const db = createDb(s.url);
    closers.push(() => closeDb(db));
    const { id } = await siteRegistry(db).add({ name: "满盘站", url: site.url });
    await signInWith(db, id, { id: 62, token: user.accessToken });
    // Fill the disk but for 256 KB: room for the runner's small writes, none for the entries.
    const filler = path.join(mount, "filler");
    const { bavail, bsize } = statfsSync(mount);
    writeFileSync(filler, Buffer.alloc(bavail * bsize - 256 * 1024));
    const opts = { syncMinutes: 10, keepDays: 400, backfillDays: 30, perMinute: 100_000, timeoutMs: 5000 };
    const t0 = Date.now();
    expect(await syncDueLedgers(db, opts, t0)).toBe(1);
    expect(await storeProblem(db)).toBe("存储空间不足：数据库无法写入");
    // Not the site's fault: no failure counted, due again within a look (or its hold, if even that write failed).
    const due = await db.ledgerDue.findFirstOrThrow({ select: { dueAt: true, failures: true } });
    expect(due.failures).toBe(0);
    expect(due.dueAt!.getTime()).toBeLessThanOrEqual(t0 + 30_000);
    // Space returns: ready at once (a write of a commit's size fits), and the next looks finish
    // the backfill, exactly.
    rmSync(filler);
    expect(await storeProblem(db)).toBeNull();
    let started = 0;
    for (let look = 1; look <= 20 && (await db.ledgerEntry.count()) < history.logs.length; look++) {
      // As each look of the ledger job does: first let go of what the full disk kept this process
      // from letting go of (the failed sync's lease).
      await releaseLeftLeases();
      started += await syncDueLedgers(db, opts, t0 + look * 31_000);
    }
    expect(started).toBeGreaterThan(0);
    expect(await db.ledgerEntry.count()).toBe(history.logs.length);
    expect(await storeProblem(db)).toBeNull();
  }, 60_000);
});
