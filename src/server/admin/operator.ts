/**
 * The operator (docs/design.md 15): one password for the deployment, set with the CLI; sessions of
 * their own (8 hours, only the token's SHA-256 stored), sign-in rate-limited per address (never
 * off) and slowed down while many addresses fail, and every sign-in, failed sign-in (counted per
 * address and ten minutes) and password change in the audit log.
 */
import { createHash, randomUUID } from "node:crypto";
import { Refusal, type RefusalCode } from "../core/errors";
import type { Db } from "../db/client";
import { hotPath } from "../db/hot-path";
import { addressBucket } from "../net/client-address";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword, verifyPassword } from "../core/password";

export const OPERATOR_SESSION_MS = 8 * 60 * 60 * 1000;
const WINDOW_MS = 60_000;
/**
 * Failed sign-ins from all addresses together past this many times the per-address budget slow
 * every answer down (by SLOWDOWN_STEP_MS each, at most SLOWDOWN_MAX_MS): a flood from many
 * addresses costs its senders time, and never locks the owner out.
 */
const FLOOD_FACTOR = 3;
const SLOWDOWN_STEP_MS = 50;
const SLOWDOWN_MAX_MS = 3_000;
/** Failed sign-ins of one address are one audit entry per this window, with a count. */
const FAILURE_AUDIT_WINDOW_MS = 10 * 60_000;

const OPERATOR_MSG = {
  notSet: "尚未设置管理员密码：请在服务器上运行 npm run sites -- admin-password",
  wrongPassword: "管理员密码错误",
  tooShort: `密码至少需要 ${MIN_PASSWORD_LENGTH} 个字符`,
  tooLong: `密码不能超过 ${MAX_PASSWORD_LENGTH} 个字符`,
  rateLimited: "登录尝试过于频繁，请稍后再试",
} as const;

const OPERATOR_CODES: Record<OperatorError["kind"], RefusalCode> = {
  notSet: "PRECONDITION_FAILED",
  wrong: "UNAUTHORIZED",
  invalid: "BAD_REQUEST",
  rateLimited: "TOO_MANY_REQUESTS",
};

export class OperatorError extends Refusal {
  constructor(
    message: string,
    readonly kind: "notSet" | "wrong" | "invalid" | "rateLimited",
    retryAfterSeconds?: number,
  ) {
    super(message, OPERATOR_CODES[kind], retryAfterSeconds);
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
    select: { id: true },
  });
}

/**
 * A failed sign-in in the audit log: one entry per address and ten minutes, counting, so that
 * failures never push the real changes out of sight.
 */
async function auditFailure(db: Db, actor: string, now: number): Promise<void> {
  const window = now - (now % FAILURE_AUDIT_WINDOW_MS);
  const groupKey = createHash("sha256").update(`signInFailed:${actor}:${window}`).digest("hex");
  const last = { last: new Date(now).toISOString() };
  const bump = () =>
    db.auditEntry.update({
      where: { groupKey },
      data: { count: { increment: 1 }, after: JSON.stringify(last) },
      select: { id: true },
    });
  try {
    await db.auditEntry.upsert({
      where: { groupKey },
      create: { action: "signInFailed", actor, groupKey, at: new Date(now), after: JSON.stringify(last) },
      update: { count: { increment: 1 }, after: JSON.stringify(last) },
      select: { id: true },
    });
  } catch (error) {
    // Another instance created the entry between the look-up and the insert: count on it.
    if ((error as { code?: string }).code !== "P2002") throw error;
    await bump();
  }
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
      select: { id: true },
    }),
    db.operatorSession.deleteMany({}),
  ]);
  await audit(db, { action: "password", actor });
}

export async function operatorPasswordSet(db: Db): Promise<boolean> {
  return (await db.operator.count()) > 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Charges one attempt to the address: refused past its budget. Other addresses' failures never
 * refuse it; while all addresses together fail more than FLOOD_FACTOR times the budget a minute,
 * the answer is slowed down instead. Returns the delay applied.
 */
async function charge(address: string, perMinute: number, db: Db, now: number): Promise<number> {
  const start = now - (now % WINDOW_MS);
  const window = new Date(start);
  const retryAfterSeconds = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000));
  const store = hotPath(db);
  if ((await store.chargeAttempt(counterKey("address", address), window)) > perMinute) {
    throw new OperatorError(OPERATOR_MSG.rateLimited, "rateLimited", retryAfterSeconds);
  }
  const failures = await store.attemptCount(counterKey("failures", "all"), window);
  const over = failures - perMinute * FLOOD_FACTOR;
  const delay = over > 0 ? Math.min(SLOWDOWN_MAX_MS, over * SLOWDOWN_STEP_MS) : 0;
  if (delay > 0) await sleep(delay);
  return delay;
}

/** Signs the operator in; the session token (only its hash is stored). */
export async function operatorSignIn(
  db: Db,
  input: { password: unknown; clientAddress: string | null; perMinute: number },
  now = Date.now(),
): Promise<{ token: string; expiresAt: Date }> {
  const address = input.clientAddress === null ? "unknown" : addressBucket(input.clientAddress);
  // Never off: a budget of 0 or less counts as 1.
  await charge(address, Math.max(1, input.perMinute), db, now);
  const operator = await db.operator.findUnique({ where: { id: 1 }, select: { passwordHash: true } });
  if (!operator) throw new OperatorError(OPERATOR_MSG.notSet, "notSet");
  const password = typeof input.password === "string" ? input.password : "";
  if (password.length > MAX_PASSWORD_LENGTH || !(await verifyPassword(password, operator.passwordHash))) {
    await hotPath(db).chargeAttempt(counterKey("failures", "all"), new Date(now - (now % WINDOW_MS)));
    await auditFailure(db, input.clientAddress ?? "unknown", now);
    throw new OperatorError(OPERATOR_MSG.wrongPassword, "wrong");
  }
  const token = randomUUID();
  const expiresAt = new Date(now + OPERATOR_SESSION_MS);
  await db.operatorSession.create({ data: { id: hashToken(token), expiresAt }, select: { id: true } });
  await audit(db, { action: "signIn", actor: input.clientAddress ?? "unknown" });
  return { token, expiresAt };
}

/** The live operator session a token names; an expired one is deleted on this read. */
export async function operatorSession(db: Db, token: string, now = new Date()) {
  if (!/^[0-9a-f-]{36}$/.test(token)) return null;
  const row = await db.operatorSession.findUnique({
    where: { id: hashToken(token) },
    select: { id: true, expiresAt: true },
  });
  if (!row) return null;
  if (row.expiresAt <= now) {
    await db.operatorSession.deleteMany({ where: { id: row.id } });
    return null;
  }
  return row;
}

/** Deletes the operator sessions that have expired (the purge job's share of this table). */
export async function purgeOperatorSessions(db: Db, now = new Date()): Promise<number> {
  return (await db.operatorSession.deleteMany({ where: { expiresAt: { lt: now } } })).count;
}

export async function operatorSignOut(db: Db, token: string): Promise<void> {
  await db.operatorSession.deleteMany({ where: { id: hashToken(token) } });
}

/** The actions of the audit log, and the groups the admin page filters by. */
export const AUDIT_ACTIONS = [
  "signIn",
  "signInFailed",
  "password",
  "siteAdd",
  "siteEdit",
  "siteRemove",
  "siteBlock",
  "siteUnblock",
  "signupMode",
  "inviteCreate",
] as const;
type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditQuery = {
  /** Only these actions (all when absent). */
  actions?: AuditAction[];
  siteId?: number;
  /** Entries older than this entry id (the `next` of the page before). */
  before?: number;
  limit?: number;
};

/** A page of the audit log, newest first; `next` continues it (null at its end). */
export async function auditLog(db: Db, q: AuditQuery = {}) {
  const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
  const rows = await db.auditEntry.findMany({
    where: {
      ...(q.actions ? { action: { in: q.actions } } : {}),
      ...(q.siteId !== undefined ? { siteId: q.siteId } : {}),
      ...(q.before !== undefined ? { id: { lt: q.before } } : {}),
    },
    orderBy: { id: "desc" },
    take: limit + 1,
    select: { id: true, at: true, action: true, actor: true, siteId: true, count: true, before: true, after: true },
  });
  const page = rows.slice(0, limit);
  return {
    entries: page.map((r) => ({
      id: r.id,
      at: r.at.toISOString(),
      action: r.action,
      actor: r.actor,
      siteId: r.siteId,
      count: r.count,
      before: r.before === null ? null : (JSON.parse(r.before) as unknown),
      after: r.after === null ? null : (JSON.parse(r.after) as unknown),
    })),
    next: rows.length > limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}
