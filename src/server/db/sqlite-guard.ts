/**
 * A SQLite store is one process's (design.md 23): the serving process holds a lock file beside
 * the database for its lifetime, so a second one is refused at start; a database missing where
 * the data folder shows an earlier install stops the start instead of beginning empty; and a
 * file deleted or replaced while the server runs is noticed, every request answered 503 until
 * it is restored and the server restarted.
 *
 * The lock is a file made exclusively (O_EXCL) holding the owner's pid: a lock whose process is
 * gone (a crash, a kill -9) is taken over at once. proper-lockfile was the first choice; it
 * judges a lock stale by its age, so a restart within its stale time after a crash is refused,
 * and a busy event loop makes the living holder's lock look stale to another process.
 */
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { processState, type StatePart } from "../core/process-state";

export class StoreRefused extends Error {}

const MARKER = "store.json";

/** Whether a process of this machine with that pid is alive (and is a Node process, where /proc tells). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("node");
  } catch {
    return true;
  }
}

/**
 * Takes the database's lock for this process (released when it exits); throws StoreRefused when
 * another living process holds it.
 */
export function lockSqlite(file: string): void {
  const lock = `${file}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
      closeSync(fd);
      process.once("exit", () => {
        try {
          const held = JSON.parse(readFileSync(lock, "utf8")) as { pid?: number };
          if (held.pid === process.pid) rmSync(lock, { force: true });
        } catch {
          // Gone already.
        }
      });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let holder: { pid?: number; host?: string } = {};
    try {
      holder = JSON.parse(readFileSync(lock, "utf8")) as typeof holder;
    } catch {
      // Unreadable or half written: judged by its pid below (none: stale).
    }
    if (typeof holder.pid === "number" && holder.pid !== process.pid && alive(holder.pid)) {
      throw new StoreRefused(
        `数据库 ${file} 正由另一个进程（pid ${holder.pid}）使用。SQLite 只能由一个服务进程使用；` +
          `要运行多个实例，请改用 PostgreSQL（DATABASE_URL=postgresql://…）。` +
          `如果确认没有其他进程在运行，删除 ${lock} 后再启动。`,
      );
    }
    rmSync(lock, { force: true });
  }
  throw new StoreRefused(`无法取得数据库锁 ${lock}`);
}

/**
 * Before a SQLite store is opened or made: refuses a database that is missing where the data
 * folder remembers one (an earlier install), so a moved or deleted file is never replaced by an
 * empty one in silence. Remembers the database once it exists.
 */
export function checkSqliteHome(file: string, dataDir: string): void {
  const marker = path.resolve(dataDir, MARKER);
  let remembered: string | null = null;
  try {
    remembered = (JSON.parse(readFileSync(marker, "utf8")) as { database?: string }).database ?? null;
  } catch {
    remembered = null;
  }
  if (!existsSync(file)) {
    if (remembered === file) {
      throw new StoreRefused(
        `数据库文件 ${file} 不存在，但 ${dataDir} 中记录着之前安装的这个数据库：` +
          `它可能被移动或删除了。请从备份恢复它后再启动；确实要从空数据库重新开始，删除 ${marker} 后再启动。`,
      );
    }
    return;
  }
  if (remembered !== file) {
    try {
      writeFileSync(marker, JSON.stringify({ database: file, since: new Date().toISOString() }), { mode: 0o600 });
    } catch {
      // A read-only data folder: nothing remembered, nothing refused later.
    }
  }
}

/** The database file this process opened: the same file must stay at its path. */
type Watched = { file: string; ino: number; dev: number; lost: string | null; timer: NodeJS.Timeout | null };

const WATCHED: StatePart<{ current: Watched | null }> = {
  name: "sqlite-watch",
  create: () => ({ current: null }),
  dispose: (w) => {
    if (w.current?.timer) clearInterval(w.current.timer);
  },
};

/** Why the opened database is gone from its path, or null while it is there. */
function look(w: Watched): string | null {
  try {
    const now = statSync(w.file);
    return now.ino === w.ino && now.dev === w.dev ? null : `数据库文件 ${w.file} 已被替换`;
  } catch {
    return `数据库文件 ${w.file} 已被删除`;
  }
}

/** Watches the database file (every 2 s, and at each `sqliteLost` call) from now on. */
export function watchSqlite(file: string): void {
  const state = processState().get(WATCHED);
  if (state.current?.timer) clearInterval(state.current.timer);
  const { ino, dev } = statSync(file);
  const watched: Watched = { file, ino, dev, lost: null, timer: null };
  watched.timer = setInterval(() => {
    watched.lost ??= look(watched);
  }, 2_000);
  watched.timer.unref();
  state.current = watched;
}

/** What is wrong with the watched database file (deleted or replaced); null while it is fine or unwatched. */
export function sqliteLost(): string | null {
  const w = processState().get(WATCHED).current;
  if (!w) return null;
  w.lost ??= look(w);
  return w.lost;
}
