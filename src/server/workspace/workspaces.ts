/**
 * Workspaces (docs/design.md 17): a person's identity on this deployment, a name and a password (scrypt
 * hash), and its sessions: one per device, server-side (only the token's SHA-256 is kept), ending
 * 30 days after their last use and 90 days after they began, each listed and revocable. API tokens
 * for other programs are sessions too, named, read-only or read-write, with no idle end.
 */
import { createHash, randomBytes } from "node:crypto";
import { Refusal, WrongSecret } from "../core/errors";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword, verifyPassword } from "../core/password";
import type { Db } from "../db/client";
import { driverOf } from "../db/driver";
import { spendInvite } from "./signup";
import { addressBucket } from "../net/client-address";

const WORKSPACE_IDLE_MS = 30 * 24 * 60 * 60_000;
export const WORKSPACE_MAX_MS = 90 * 24 * 60 * 60_000;
/** A session's last use is written at most this often (not on every request). */
const TOUCH_EVERY_MS = 5 * 60_000;
/** Workspaces one address may create per hour while creation is open. */
const CREATIONS_PER_HOUR = 3;
const NAME_MIN = 2;
const NAME_MAX = 40;
const API_TOKENS_MAX = 20;

export const WS_MSG = {
  nameInvalid: `工作区名称需为 ${NAME_MIN} 到 ${NAME_MAX} 个字符，不含控制字符`,
  nameTaken: "该工作区名称已被使用",
  passwordTooShort: `密码至少需要 ${MIN_PASSWORD_LENGTH} 个字符`,
  passwordBlank: "密码不能只有空格",
  passwordTooLong: `密码不能超过 ${MAX_PASSWORD_LENGTH} 个字符`,
  wrongCredentials: "工作区名称或密码错误",
  wrongPassword: "当前密码错误",
  tooManyCreations: "此地址创建工作区过于频繁，请一小时后再试",
  sessionNotFound: "该设备不存在或已退出",
  tokenNotFound: "该 API 令牌不存在或已撤销",
  syncNeedsPassword: "创建同步凭据需要输入工作区密码",
  tokenNameInvalid: "令牌名称需为 1 到 40 个字符",
  tooManyTokens: `API 令牌最多 ${API_TOKENS_MAX} 个，请先撤销不用的令牌`,
  readOnly: "该 API 令牌只读，不能修改工作区",
  syncOnly: "同步凭据只能用于 All API Hub 的 WebDAV 同步",
  tooManyWrong: "密码或验证码错误次数过多，此设备已退出登录，请重新登录",
} as const;

/**
 * Wrong passwords or codes one signed-in device may give (changing the password, turning the second
 * factor on or off) before it is signed out: a stolen device cookie is not a way to guess them.
 */
const MAX_WRONG_SECRETS = 5;

type SessionKind = "device" | "api-read" | "api-write" | "api-sync";

/** A workspace session as a request holds it. */
export type WorkspaceSession = {
  id: string;
  workspaceId: number;
  workspaceName: string;
  kind: SessionKind;
  activeAccountId: number | null;
};

const DEVICE_PREFIX = "gdw_";
const API_PREFIX = "gdk_";
const TOKEN_SHAPE = /^gd[wk]_[A-Za-z0-9_-]{43}$/;

export const hashWorkspaceToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** What an API token may do: read, read and write, or only the All API Hub sync (WebDAV). */
export type ApiAccess = "read" | "write" | "sync";

export const apiAccessOf = (kind: string): ApiAccess =>
  kind === "api-read" ? "read" : kind === "api-sync" ? "sync" : "write";

/** Whether a Bearer token is a workspace's (a session or an API token), by its shape. */
export function isWorkspaceToken(token: string): boolean {
  return token.startsWith(DEVICE_PREFIX) || token.startsWith(API_PREFIX);
}

function newToken(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

/** The form names are compared in: NFKC, trimmed, case-folded ("Ａlice " and "alice" are one name). */
export function nameKeyOf(name: string): string {
  return name.normalize("NFKC").trim().toLowerCase();
}

function checkName(raw: string): string {
  const name = raw.normalize("NFC").trim();
  const length = [...name].length;
  // eslint-disable-next-line no-control-regex
  if (length < NAME_MIN || length > NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new Refusal(WS_MSG.nameInvalid, "BAD_REQUEST");
  }
  return name;
}

function checkPassword(password: string): void {
  if (password.length > 0 && password.trim() === "") throw new Refusal(WS_MSG.passwordBlank, "BAD_REQUEST");
  if (password.length < MIN_PASSWORD_LENGTH) throw new Refusal(WS_MSG.passwordTooShort, "BAD_REQUEST");
  if (password.length > MAX_PASSWORD_LENGTH) throw new Refusal(WS_MSG.passwordTooLong, "BAD_REQUEST");
}

/** A short name of the device a session was opened on, from its User-Agent ("Chrome · Windows"). */
export function deviceOf(userAgent: string | null): string {
  const ua = userAgent ?? "";
  const browser = /Edg\//.test(ua)
    ? "Edge"
    : /Firefox\//.test(ua)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(ua)
        ? "Chrome"
        : /Safari\//.test(ua)
          ? "Safari"
          : /^curl\//.test(ua)
            ? "curl"
            : ua.split(/[\s/]/)[0]?.slice(0, 30) || "未知客户端";
  const os = /iPhone|iPad|iOS/.test(ua)
    ? "iOS"
    : /Android/.test(ua)
      ? "Android"
      : /Windows/.test(ua)
        ? "Windows"
        : /Mac OS X|Macintosh/.test(ua)
          ? "macOS"
          : /Linux/.test(ua)
            ? "Linux"
            : null;
  return os ? `${browser} · ${os}` : browser;
}

/** The hash an address is counted under for the creation limit (its /64 for IPv6), never the address. */
function addressKey(address: string | null): string | null {
  return address === null
    ? null
    : createHash("sha256")
        .update(`ws-create:${addressBucket(address)}`)
        .digest("hex");
}

export type OpenedSession = { token: string; expiresAt: Date; workspace: { id: number; name: string } };

/** Where a session is opened from. */
export type Opener = { userAgent: string | null; address: string | null };

async function openSession(db: Db, workspace: { id: number; name: string }, from: Opener, now: Date) {
  const token = newToken(DEVICE_PREFIX);
  const expiresAt = new Date(now.getTime() + WORKSPACE_IDLE_MS);
  await db.workspaceSession.create({
    data: {
      id: hashWorkspaceToken(token),
      workspaceId: workspace.id,
      kind: "device",
      device: deviceOf(from.userAgent),
      address: from.address,
      createdAt: now,
      lastUsedAt: now,
      expiresAt,
    },
    select: { id: true },
  });
  return { token, expiresAt, workspace };
}

export function workspaceStore(db: Db) {
  return {
    /** Accounts saved in every workspace (the metrics). */
    countSavedAccounts(): Promise<number> {
      return db.workspaceAccount.count();
    },

    /**
     * Creates a workspace and signs its creator in. The count of the address's creations, the
     * name's check, the invite code's spending (`invite` given: the site asks for one) and the
     * insert are one transaction, serialised per address (PostgreSQL: an advisory lock; SQLite
     * runs one transaction at a time), so parallel creations cannot pass the limit together and a
     * refused one spends no code.
     */
    async register(
      input: { name: string; password: string },
      from: Opener,
      invite: { required: boolean; code?: string },
      now = new Date(),
    ): Promise<OpenedSession> {
      const name = checkName(input.name);
      checkPassword(input.password);
      const createdFrom = addressKey(from.address);
      const nameKey = nameKeyOf(name);
      const passwordHash = await hashPassword(input.password);
      let created: { id: number; name: string };
      try {
        created = await db.$transaction(async (tx) => {
          if (driverOf(db).kind === "postgres") {
            await tx.$queryRawUnsafe("SELECT pg_advisory_xact_lock(hashtext($1))::text", `ws-create:${createdFrom}`);
          }
          if (createdFrom !== null) {
            const recent = await tx.workspace.count({
              where: { createdFrom, createdAt: { gt: new Date(now.getTime() - 60 * 60_000) } },
            });
            if (recent >= CREATIONS_PER_HOUR) throw new Refusal(WS_MSG.tooManyCreations, "TOO_MANY_REQUESTS", 3600);
          }
          if (await tx.workspace.findUnique({ where: { nameKey }, select: { id: true } })) {
            throw new Refusal(WS_MSG.nameTaken, "BAD_REQUEST");
          }
          if (invite.required) await spendInvite(tx, invite.code, now);
          return tx.workspace.create({
            data: { name, nameKey, passwordHash, createdFrom, createdAt: now, passwordChangedAt: now },
            select: { id: true, name: true },
          });
        });
      } catch (error) {
        // Two creations of one name at once: the unique key keeps one.
        if ((error as { code?: string }).code === "P2002") throw new Refusal(WS_MSG.nameTaken, "BAD_REQUEST");
        throw error;
      }
      return openSession(db, created, from, now);
    },

    /** The workspace a name and password open, or null (the same answer for an unknown name). */
    async verify(name: string, password: string) {
      const row = await db.workspace.findUnique({
        where: { nameKey: nameKeyOf(name) },
        select: { id: true, name: true, passwordHash: true, totpSecret: true, recoveryCodes: true },
      });
      // An unknown name costs the same scrypt as a known one.
      const ok = await verifyPassword(password, row?.passwordHash ?? UNKNOWN_HASH);
      return row && ok ? row : null;
    },

    open(workspace: { id: number; name: string }, from: Opener, now = new Date()): Promise<OpenedSession> {
      return openSession(db, workspace, from, now);
    },

    /**
     * The live session a token names, its last use noted (at most every few minutes, which also
     * moves its idle end). null for an unknown, ended or malformed token.
     */
    async find(token: string, now = new Date()): Promise<WorkspaceSession | null> {
      if (!TOKEN_SHAPE.test(token)) return null;
      const id = hashWorkspaceToken(token);
      const row = await db.workspaceSession.findUnique({
        where: { id },
        select: {
          id: true,
          workspaceId: true,
          kind: true,
          createdAt: true,
          lastUsedAt: true,
          expiresAt: true,
          activeAccountId: true,
        },
      });
      if (!row) return null;
      if (row.expiresAt !== null && row.expiresAt.getTime() <= now.getTime()) {
        await db.workspaceSession.deleteMany({ where: { id } });
        return null;
      }
      const workspace = await db.workspace.findUnique({ where: { id: row.workspaceId }, select: { name: true } });
      if (!workspace) return null;
      if (now.getTime() - row.lastUsedAt.getTime() > TOUCH_EVERY_MS) {
        const idleEnd = now.getTime() + WORKSPACE_IDLE_MS;
        const hardEnd = row.createdAt.getTime() + WORKSPACE_MAX_MS;
        await db.workspaceSession.updateMany({
          where: { id },
          data: {
            lastUsedAt: now,
            ...(row.kind === "device" ? { expiresAt: new Date(Math.min(idleEnd, hardEnd)) } : {}),
          },
        });
      }
      return {
        id,
        workspaceId: row.workspaceId,
        workspaceName: workspace.name,
        kind: row.kind as SessionKind,
        activeAccountId: row.activeAccountId,
      };
    },

    /** Whether a session (by its stored id) still lives. */
    async isLive(sessionId: string, now = new Date()): Promise<boolean> {
      const row = await db.workspaceSession.findUnique({ where: { id: sessionId }, select: { expiresAt: true } });
      return row !== null && (row.expiresAt === null || row.expiresAt.getTime() > now.getTime());
    },

    async end(sessionId: string): Promise<void> {
      await db.workspaceSession.deleteMany({ where: { id: sessionId } });
    },

    /** The workspace's devices (signed-in sessions), the most recently used first. */
    async devices(workspaceId: number, now = new Date()) {
      return db.workspaceSession.findMany({
        where: { workspaceId, kind: "device", expiresAt: { gt: now } },
        select: { id: true, device: true, address: true, createdAt: true, lastUsedAt: true, expiresAt: true },
        orderBy: { lastUsedAt: "desc" },
        take: 200,
      });
    },

    /** Ends one device of the workspace; false when it names none of its. */
    async endDevice(workspaceId: number, id: string): Promise<boolean> {
      const { count } = await db.workspaceSession.deleteMany({ where: { id, workspaceId, kind: "device" } });
      return count > 0;
    },

    /**
     * Ends every credential the workspace issued but `keep` (null: all of them), its devices and its
     * API tokens alike: recovery leaves nothing an intruder minted. Returns how many ended.
     */
    async endAllExcept(workspaceId: number, keep: string | null): Promise<number> {
      const { count } = await db.workspaceSession.deleteMany({
        where: { workspaceId, ...(keep === null ? {} : { id: { not: keep } }) },
      });
      return count;
    },

    /**
     * Runs a step that checks a secret on a signed-in session: a wrong one is counted on the
     * session, the count said in the answer, and at MAX_WRONG_SECRETS the session ends.
     */
    async guessing<T>(session: WorkspaceSession, step: () => Promise<T>): Promise<T> {
      try {
        return await step();
      } catch (error) {
        if (!(error instanceof WrongSecret)) throw error;
        const { failedChecks } = await db.workspaceSession.update({
          where: { id: session.id },
          data: { failedChecks: { increment: 1 } },
          select: { failedChecks: true },
        });
        if (failedChecks >= MAX_WRONG_SECRETS) {
          await this.end(session.id);
          throw new Refusal(WS_MSG.tooManyWrong, "UNAUTHORIZED");
        }
        const left = MAX_WRONG_SECRETS - failedChecks;
        throw new Refusal(`${error.message}（再错 ${left} 次此设备将退出登录）`, error.code);
      }
    },

    /** The workspace's password asked again before something grave (a backup with every token). */
    async confirmPassword(workspaceId: number, password: string): Promise<void> {
      const row = await db.workspace.findUnique({ where: { id: workspaceId }, select: { passwordHash: true } });
      if (!row || !(await verifyPassword(password, row.passwordHash))) {
        throw new WrongSecret(WS_MSG.wrongPassword, "BAD_REQUEST");
      }
    },

    /** Changes the password; every other device is signed out and every API token revoked. */
    async changePassword(session: WorkspaceSession, current: string, next: string, now = new Date()) {
      const row = await db.workspace.findUnique({
        where: { id: session.workspaceId },
        select: { passwordHash: true },
      });
      if (!row || !(await verifyPassword(current, row.passwordHash))) {
        throw new WrongSecret(WS_MSG.wrongPassword, "BAD_REQUEST");
      }
      checkPassword(next);
      await db.workspace.update({
        where: { id: session.workspaceId },
        data: { passwordHash: await hashPassword(next), passwordChangedAt: now },
        select: { id: true },
      });
      return this.endAllExcept(session.workspaceId, session.id);
    },

    async setActiveAccount(sessionId: string, accountId: number | null): Promise<void> {
      await db.workspaceSession.updateMany({ where: { id: sessionId }, data: { activeAccountId: accountId } });
    },

    /** A new API token, shown once: read-only, read-write or the WebDAV sync's, named. */
    async createApiToken(workspaceId: number, rawName: string, access: ApiAccess, now = new Date()) {
      const name = rawName.trim();
      if (name.length < 1 || [...name].length > 40) throw new Refusal(WS_MSG.tokenNameInvalid, "BAD_REQUEST");
      const count = await db.workspaceSession.count({ where: { workspaceId, kind: { not: "device" } } });
      if (count >= API_TOKENS_MAX) throw new Refusal(WS_MSG.tooManyTokens, "BAD_REQUEST");
      const token = newToken(API_PREFIX);
      const row = await db.workspaceSession.create({
        data: {
          id: hashWorkspaceToken(token),
          workspaceId,
          kind: `api-${access}`,
          name,
          device: "API",
          createdAt: now,
          lastUsedAt: now,
          expiresAt: null,
        },
        select: { id: true, name: true, kind: true, createdAt: true },
      });
      return { token, id: row.id, name, access, createdAt: row.createdAt };
    },

    async apiTokens(workspaceId: number) {
      const rows = await db.workspaceSession.findMany({
        where: { workspaceId, kind: { not: "device" } },
        select: { id: true, name: true, kind: true, createdAt: true, lastUsedAt: true },
        orderBy: { createdAt: "desc" },
      });
      return rows.map((r) => ({
        id: r.id,
        name: r.name ?? "",
        access: apiAccessOf(r.kind),
        createdAt: r.createdAt,
        lastUsedAt: r.lastUsedAt,
      }));
    },

    async revokeApiToken(workspaceId: number, id: string): Promise<boolean> {
      const { count } = await db.workspaceSession.deleteMany({ where: { id, workspaceId, kind: { not: "device" } } });
      return count > 0;
    },

    /** Deletes up to `batch` ended device sessions; returns how many went. */
    async purgeExpired(batch: number, now = new Date()): Promise<number> {
      const rows = await db.workspaceSession.findMany({
        where: { expiresAt: { lte: now } },
        select: { id: true },
        take: batch,
      });
      if (rows.length === 0) return 0;
      const { count } = await db.workspaceSession.deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
      return count;
    },
  };
}

/** A hash no password matches, verified against when a name is unknown (same work, same time). */
const UNKNOWN_HASH = `scrypt$16384$8$1$${Buffer.alloc(16).toString("base64")}$${Buffer.alloc(32).toString("base64")}`;
