import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { EnvError, env, type Env } from "../core/env";

/** Password id → password. The highest id seals; every id unseals. */
export type PasswordMap = Record<string, string>;

const MIN_LENGTH = 32;
const PASSWORD_FILE = "session-password";

/** A secret, or a rotation map of them (`{"1":"…","2":"…"}`), from the variable `name`. */
export function parseSecretMap(name: string, raw: string): PasswordMap {
  const trimmed = raw.trim();
  let map: PasswordMap;
  if (trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new EnvError(`${name}: 不是有效的 JSON 对象`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new EnvError(`${name}: 必须是字符串或 {"编号":"密码"} 形式的 JSON 对象`);
    }
    map = {};
    for (const [id, value] of Object.entries(parsed)) {
      if (!/^[1-9]\d{0,5}$/.test(id) || typeof value !== "string") {
        throw new EnvError(`${name}: 键 "${id}" 必须是正整数编号（1 到 999999），值必须是字符串`);
      }
      map[id] = value;
    }
    if (Object.keys(map).length === 0) throw new EnvError(`${name}: 至少需要一个密码`);
  } else {
    map = { "1": trimmed };
  }
  for (const [id, value] of Object.entries(map)) {
    if (value.length < MIN_LENGTH) {
      throw new EnvError(`${name}: 编号 ${id} 的密码至少需要 ${MIN_LENGTH} 个字符`);
    }
  }
  return map;
}

export function parsePasswords(raw: string): PasswordMap {
  return parseSecretMap("SESSION_PASSWORD", raw);
}

/**
 * The password from SESSION_PASSWORD, or, for the embedded SQLite store only, one generated once
 * into the data folder and reused (folder 0700, file 0600, also when they existed before).
 * Instances sharing PostgreSQL must share a password.
 */
function resolvePasswords(e: Env): PasswordMap {
  if (e.SESSION_PASSWORD) return parsePasswords(e.SESSION_PASSWORD);
  if (!e.DATABASE_URL.startsWith("file:")) {
    throw new EnvError("SESSION_PASSWORD: 使用 PostgreSQL 时必须显式设置（所有实例共用同一个密码，至少 32 个字符）");
  }
  const file = path.resolve(e.DATA_DIR, PASSWORD_FILE);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  chmodSync(path.dirname(file), 0o700);
  try {
    const map = parsePasswords(readFileSync(file, "utf8"));
    chmodSync(file, 0o600);
    return map;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const generated = randomBytes(32).toString("hex");
  try {
    writeFileSync(file, `${generated}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return parsePasswords(readFileSync(file, "utf8"));
  }
  chmodSync(file, 0o600);
  return { "1": generated };
}

let cached: PasswordMap | undefined;

/** The configured passwords of this process, resolved once. */
export function passwords(): PasswordMap {
  cached ??= resolvePasswords(env());
  return cached;
}

/** Replaces the password set of this process (tests of rotation; the server reads the env once). */
export function setPasswords(map: PasswordMap | undefined): void {
  cached = map;
}
