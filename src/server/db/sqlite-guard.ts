/**
 * A SQLite store is one process's (docs/design.md 23): the serving process holds a lock file beside
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
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
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
  // The file itself, however it is named: a symlinked path locks the file it points to, and the
  // lock names the file's device and inode (a second hard link in the folder is found by them).
  const real = realpathSync(file);
  const { dev, ino } = statSync(real);
  const lock = `${real}.lock`;
  const other = lockOfSameFile(real, lock, dev, ino);
  if (other) refuse(file, other.pid, other.lock);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString(), dev, ino }));
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
      refuse(file, holder.pid, lock);
    }
    rmSync(lock, { force: true });
  }
  throw new StoreRefused(`无法取得数据库锁 ${lock}`);
}

function refuse(file: string, pid: number, lock: string): never {
  throw new StoreRefused(
    `数据库 ${file} 正由另一个进程（pid ${pid}）使用。SQLite 只能由一个服务进程使用；` +
      `要运行多个实例，请改用 PostgreSQL（DATABASE_URL=postgresql://…）。` +
      `如果确认没有其他进程在运行，删除 ${lock} 后再启动。`,
  );
}

/** A living process's lock on the same file (device and inode) under another name in its folder. */
function lockOfSameFile(real: string, own: string, dev: number, ino: number): { pid: number; lock: string } | null {
  const dir = path.dirname(real);
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".lock"));
  } catch {
    return null;
  }
  for (const name of names) {
    const lock = path.join(dir, name);
    if (lock === own) continue;
    try {
      const held = JSON.parse(readFileSync(lock, "utf8")) as { pid?: number; dev?: number; ino?: number };
      if (held.dev === dev && held.ino === ino && typeof held.pid === "number" && alive(held.pid)) {
        return { pid: held.pid, lock };
      }
    } catch {
      // Not a lock of ours.
    }
  }
  return null;
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
  // An empty file where the database was (a tool opened the path after the file was deleted) is
  // as missing as no file: nothing is made on it.
  if (existsSync(file) && remembered === file && statSync(file).size === 0) {
    throw new StoreRefused(
      `数据库文件 ${file} 是空的，但 ${dataDir} 中记录着之前安装的这个数据库：它可能被删除后又被别的程序建成了空文件。` +
        `请从备份恢复它后再启动；确实要从空数据库重新开始，删除 ${file} 和 ${marker} 后再启动。`,
    );
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
