import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/server";

const root = mkdtempSync(path.join(tmpdir(), "gd-modes-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What `npm start` does before it serves: validate, make the password, migrate. */
function prepare(dataDir: string) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `file:${path.join(dataDir, "dashboard.db")}`,
    DATA_DIR: dataDir,
  };
  delete env.SESSION_PASSWORD;
  const res = spawnSync(process.execPath, [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/prepare.ts"], {
    cwd: ROOT,
    env,
    encoding: "utf8",
  });
  expect(res.status, res.stderr).toBe(0);
}

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

// The WAL files exist only while a connection is open; the server makes them under umask 077.
describe("the data folder", () => {
  it("is private on a first start: folder 0700, database and password 0600", () => {
    const data = path.join(root, "fresh");
    prepare(data);
    expect(mode(data)).toBe("700");
    for (const f of ["dashboard.db", "session-password"]) expect(mode(path.join(data, f)), f).toBe("600");
  });

  it("is made private when it was not", () => {
    const data = path.join(root, "older");
    mkdirSync(data, { mode: 0o755 });
    chmodSync(data, 0o755);
    writeFileSync(path.join(data, "session-password"), `${"p".repeat(40)}\n`, { mode: 0o644 });
    prepare(data);
    chmodSync(path.join(data, "dashboard.db"), 0o644);
    prepare(data);
    expect(mode(data)).toBe("700");
    expect(mode(path.join(data, "session-password"))).toBe("600");
    expect(mode(path.join(data, "dashboard.db"))).toBe("600");
  });
});
