/**
 * The operator (design.md 15): one password for the deployment, set with the CLI; sessions of
 * their own (8 hours, only the token's SHA-256 stored), sign-in rate-limited per address and in
 * total, and every sign-in, failed sign-in and password change in the audit log.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import { hotPath } from "../db/hot-path";
import { addressBucket } from "../net/client-address";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword, verifyPassword } from "./password";

export const OPERATOR_SESSION_MS = 8 * 60 * 60 * 1000;
const WINDOW_MS = 60_000;
/** All addresses together may try this many times the per-address budget a minute. */
const TOTAL_FACTOR = 3;

export const OPERATOR_MSG = {
  notSet: "尚未设置管理员密码：请在服务器上运行 npm run sites -- admin-password",
  wrongPassword: "管理员密码错误",
  tooShort: `密码至少需要 ${MIN_PASSWORD_LENGTH} 个字符`,
  tooLong: `密码不能超过 ${MAX_PASSWORD_LENGTH} 个字符`,
  rateLimited: "登录尝试过于频繁，请稍后再试",
} as const;

export class OperatorError extends Error {
  constructor(
    message: string,
    readonly kind: "notSet" | "wrong" | "invalid" | "rateLimited",
    readonly retryAfterSeconds = 0,
  ) {
    super(message);
  }
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");
const counterKey = (kind: string, value: string) =>
  createHash("sha256").update(`operator-${kind}:${value}`).digest("hex");

export async function audit(
  db: Db,
  entry: { action: string; actor: string; siteId?: number; before?: unknown; after?: unknown },
): Promise<void> {
  await db.auditEntry.create({
    data: {
      action: entry.action,
      actor: entry.actor,
      siteId: entry.siteId ?? null,
      before: entry.before === undefined ? null : JSON.stringify(entry.before),
      after: entry.after === undefined ? null : JSON.stringify(entry.after),
    },
  });
}

/** Sets (or replaces) the password; every operator session ends. */
export async function setOperatorPassword(db: Db, password: string, actor = "命令行"): Promise<void> {
  if (password.length < MIN_PASSWORD_LENGTH) throw new OperatorError(OPERATOR_MSG.tooShort, "invalid");
  if (password.length > MAX_PASSWORD_LENGTH) throw new OperatorError(OPERATOR_MSG.tooLong, "invalid");
  const passwordHash = await hashPassword(password);
  await db.$transaction([
    db.operator.upsert({
      where: { id: 1 },
      create: { id: 1, passwordHash, updatedAt: new Date() },
      update: { passwordHash, updatedAt: new Date() },
    }),
    db.operatorSession.deleteMany({}),
  ]);
  await audit(db, { action: "password", actor });
}

export async function operatorPasswordSet(db: Db): Promise<boolean> {
  return (await db.operator.count()) > 0;
}

/** Charges one attempt to the address and to the total; refused past either budget. */
async function charge(address: string, perMinute: number, db: Db, now: number): Promise<void> {
  if (perMinute <= 0) return;
  const start = now - (now % WINDOW_MS);
  const window = new Date(start);
  const retryAfterSeconds = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000));
  const store = hotPath(db);
  const refused = () => new OperatorError(OPERATOR_MSG.rateLimited, "rateLimited", retryAfterSeconds);
  if ((await store.chargeAttempt(counterKey("address", address), window)) > perMinute) throw refused();
  if ((await store.chargeAttempt(counterKey("total", "all"), window)) > perMinute * TOTAL_FACTOR) throw refused();
}

/** Signs the operator in; the session token (only its hash is stored). */
export async function operatorSignIn(
  db: Db,
  input: { password: unknown; clientAddress: string | null; perMinute: number },
  now = Date.now(),
): Promise<{ token: string; expiresAt: Date }> {
  const address = input.clientAddress === null ? "unknown" : addressBucket(input.clientAddress);
  await charge(address, input.perMinute, db, now);
  const operator = await db.operator.findUnique({ where: { id: 1 } });
  if (!operator) throw new OperatorError(OPERATOR_MSG.notSet, "notSet");
  const password = typeof input.password === "string" ? input.password : "";
  if (password.length > MAX_PASSWORD_LENGTH || !(await verifyPassword(password, operator.passwordHash))) {
    await audit(db, { action: "signInFailed", actor: input.clientAddress ?? "unknown" });
    throw new OperatorError(OPERATOR_MSG.wrongPassword, "wrong");
  }
  const token = randomUUID();
  const expiresAt = new Date(now + OPERATOR_SESSION_MS);
  await db.operatorSession.create({ data: { id: hashToken(token), expiresAt } });
  await audit(db, { action: "signIn", actor: input.clientAddress ?? "unknown" });
  return { token, expiresAt };
}

/** The live operator session a token names; an expired one is deleted on this read. */
export async function operatorSession(db: Db, token: string, now = new Date()) {
  if (!/^[0-9a-f-]{36}$/.test(token)) return null;
  const row = await db.operatorSession.findUnique({ where: { id: hashToken(token) } });
  if (!row) return null;
  if (row.expiresAt <= now) {
    await db.operatorSession.deleteMany({ where: { id: row.id } });
    return null;
  }
  return row;
}

export async function operatorSignOut(db: Db, token: string): Promise<void> {
  await db.operatorSession.deleteMany({ where: { id: hashToken(token) } });
}

/** The audit log, newest first. */
export async function auditLog(db: Db, take = 100) {
  const rows = await db.auditEntry.findMany({ orderBy: [{ at: "desc" }, { id: "desc" }], take });
  return rows.map((r) => ({
    at: r.at.toISOString(),
    action: r.action,
    actor: r.actor,
    siteId: r.siteId,
    before: r.before === null ? null : (JSON.parse(r.before) as unknown),
    after: r.after === null ? null : (JSON.parse(r.after) as unknown),
  }));
}
