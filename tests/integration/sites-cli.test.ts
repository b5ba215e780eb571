import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { userInfo } from "node:os";
import { startGateway } from "../../src/demo/gateway";
import { closeDb, createDb } from "../../src/server/db/client";
import { ROOT } from "../support/server";

const dir = mkdtempSync(path.join(tmpdir(), "gd-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sites(...args: string[]) {
  const res = spawnSync(
    process.execPath,
    [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/sites.ts", ...args],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: `file:${path.join(dir, "cli.db")}`, DATA_DIR: dir },
      encoding: "utf8",
    },
  );
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

function json(stdout: string): unknown {
  const lines = stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? "");
}

describe("npm run sites", () => {
  // Seven runs of the CLI, each a process of its own that loads the store's client (about 2 s
  // each on an idle two-core machine, twice that while the other suites run): the time is theirs.
  it("adds, lists, updates and removes sites, one line of JSON each", { timeout: 120_000 }, () => {
    const added = sites("add", "--name", "主站", "--url", "https://api.example.com/");
    expect(added.code).toBe(0);
    expect(json(added.stdout)).toEqual({ id: 1, name: "主站", url: "https://api.example.com" });

    expect(json(sites("add", "--name", "备用", "--url", "http://10.0.0.2:3000").stdout)).toEqual({
      id: 2,
      name: "备用",
      url: "http://10.0.0.2:3000",
    });
    expect(json(sites("list").stdout)).toEqual([
      { id: 1, name: "主站", url: "https://api.example.com" },
      { id: 2, name: "备用", url: "http://10.0.0.2:3000" },
    ]);
    expect(json(sites("update", "2", "--name", "备用站").stdout)).toEqual({
      id: 2,
      name: "备用站",
      url: "http://10.0.0.2:3000",
    });
    // A move says what became of the old address's sessions and the ledger.
    expect(json(sites("update", "2", "--url", "https://b.example.com/base/").stdout)).toEqual({
      id: 2,
      name: "备用站",
      url: "https://b.example.com/base",
      move: { endedSessions: 0, ledger: "archived", archivedEntries: 0 },
    });
    expect(json(sites("remove", "1").stdout)).toEqual({ id: 1, name: "主站", url: "https://api.example.com" });
    expect(json(sites("list").stdout)).toEqual([{ id: 2, name: "备用站", url: "https://b.example.com/base" }]);
  });

  it("writes every change to the audit log as the admin page does, naming the command line and the host user", async () => {
    const db = createDb(`file:${path.join(dir, "cli.db")}`);
    try {
      const entries = await db.auditEntry.findMany({
        orderBy: { id: "asc" },
        select: { action: true, actor: true, siteId: true, before: true, after: true },
      });
      expect(entries.map((e) => [e.action, e.siteId])).toEqual([
        ["siteAdd", 1],
        ["siteAdd", 2],
        ["siteEdit", 2],
        ["siteEdit", 2],
        ["siteRemove", 1],
      ]);
      for (const e of entries) expect(e.actor).toBe(`命令行（${userInfo().username}）`);
      expect(JSON.parse(entries[3]?.before ?? "{}")).toMatchObject({ url: "http://10.0.0.2:3000" });
      expect(JSON.parse(entries[3]?.after ?? "{}")).toMatchObject({
        url: "https://b.example.com/base",
        ledger: "archived",
      });
    } finally {
      await closeDb(db);
    }
  });

  it.each([
    [["add", "--name", "x", "--url", "ftp://x.example.com"], 1, "http:// 或 https://"],
    [["add", "--name", "x", "--url", "not a url"], 1, "站点地址无效"],
    [["add", "--name", "  ", "--url", "https://x.example.com"], 1, "站点名称不能为空"],
    [["add", "--name", "x"], 2, "add 需要 --name 和 --url"],
    [["update", "999", "--name", "x"], 1, "站点不存在: 999"],
    [["update", "abc", "--name", "x"], 2, "站点 id 必须是正整数"],
    [["update", "2"], 2, "至少需要 --name 或 --url"],
    [["remove", "999"], 1, "站点不存在: 999"],
    [["remove"], 2, "remove 需要一个站点 id"],
    [["frobnicate"], 2, "未知命令"],
    [["add", "--nmae", "x"], 2, "用法"],
    [[], 2, "用法"],
  ])("refuses %j with exit %i and a clear message", (args, code, message) => {
    const res = sites(...args);
    expect(res.code).toBe(code);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(message);
  });
});

describe("npm run sites -- probe", () => {
  // The CLI runs while this process serves the stand-in, so it is spawned without blocking.
  const run = (...args: string[]) =>
    promisify(execFile)(
      process.execPath,
      [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/sites.ts", ...args],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: `file:${path.join(dir, "probe.db")}`, DATA_DIR: dir },
        encoding: "utf8",
      },
    );

  it("stores the family, version and money settings /api/status tells, and says why it cannot", async () => {
    const gateway = await startGateway({
      family: "one-hub",
      users: [],
      status: { version: "v0.14.27", quota_per_unit: 1_000_000, display_in_currency: false },
    });
    try {
      const added = JSON.parse((await run("add", "--name", "中转", "--url", gateway.url)).stdout) as { id: number };
      const probed = JSON.parse((await run("probe", String(added.id))).stdout) as Record<string, unknown>;
      expect(probed).toMatchObject({
        id: added.id,
        name: "中转",
        family: "one-hub",
        version: "v0.14.27",
        systemName: "One Hub",
        money: { quotaPerUnit: 1_000_000, display: "TOKENS", symbol: "", rate: 1 },
      });
      expect(typeof probed.probedAt).toBe("string");
      await gateway.close();
      const failed = await run("probe", String(added.id)).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain("站点探测失败: 连接被拒绝");
    } finally {
      await gateway.close();
    }
  });
});
