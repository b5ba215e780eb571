/**
 * The stand-in's token writes, per family as gateway-actions.md §2.2–§6 and §7 describe them:
 * create (new-api, Veloera and one-hub answer without the key; one-api with the whole token;
 * done-hub with `{id, key}`), the full-replacement PUT that resets every field left out,
 * `?status_only=`, delete (one-api's for good), new-api's batch delete and its key reveal from
 * the critical budget, gin's 307 on a slash too many or too few, and the families' messages.
 */
import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import { ok, send } from "./answer";
import { tokenRow } from "./tokens";
import type { GatewayUser, StandInFamily, StandInToken } from "./types";

export type TokenWriteState = {
  family: StandInFamily;
  quotaPerUnit: number;
  /** new-api's critical budget (redeems and key reveals): true when one more call is allowed, counting it. */
  takeCritical: () => boolean;
  readBody: (req: IncomingMessage) => Promise<unknown>;
};

const fail = (res: ServerResponse, message: string) => send(res, 200, { success: false, message });
const isRow = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const hubLike = (f: StandInFamily) => f === "one-hub" || f === "done-hub";
/** The groups a one-hub user may put a key in. */
const HUB_GROUPS = new Set(["default", "vip"]);

/** Whether a path is one of the token write routes (or one a slash off, which gin redirects). */
export function isTokenWrite(method: string, path: string): boolean {
  if (method === "GET") return /^\/api\/token\/\d+\/?$/.test(path) || /^\/api\/token\/[^/]+$/.test(path);
  return /^\/api\/token(\/.*)?$/.test(path);
}

const key48 = () =>
  randomBytes(36)
    .toString("base64")
    .replace(/[^A-Za-z0-9]/g, "x")
    .slice(0, 48);

function tokensOf(user: GatewayUser): StandInToken[] {
  return (user.tokens ??= []);
}

const int = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? Math.trunc(v) : 0);
const text = (v: unknown): string => (typeof v === "string" ? v : "");
const list = (v: string, sep: RegExp) =>
  v
    .split(sep)
    .map((s) => s.trim())
    .filter(Boolean);

/** The row as the family answers it: new-api's masked, the others' full. */
const answerRow = (family: StandInFamily, t: StandInToken, user: GatewayUser) => tokenRow(family, t, user.data.id);

/** Why the family refuses these fields; null when it takes them. */
function refusal(
  state: TokenWriteState,
  body: Record<string, unknown>,
  count: number,
  creating: boolean,
): string | null {
  const { family } = state;
  const name = text(body.name);
  const nameMax = family === "new-api" ? 50 : 30;
  if (Buffer.byteLength(name, "utf8") > nameMax)
    return family === "one-api" ? "参数错误：令牌名称过长" : "令牌名称过长";
  if (family === "new-api" && body.unlimited_quota !== true) {
    const quota = int(body.remain_quota);
    if (quota < 0) return "额度值不能为负数";
    if (quota > 1e9 * state.quotaPerUnit) return `额度值超出有效范围，最大值为 ${1e9 * state.quotaPerUnit}`;
  }
  if (family === "new-api" && creating && count >= 1000) return "已达到最大令牌数量限制 (1000)";
  if (family === "one-api") {
    for (const net of list(text(body.subnet), /,/)) {
      const [address = "", prefix] = net.split("/");
      if (prefix === undefined || isIP(address) === 0 || !/^\d+$/.test(prefix)) {
        return `参数错误：无效的网段：failed to parse subnet: invalid CIDR address: ${net}`;
      }
    }
  }
  if (hubLike(family)) {
    for (const g of [text(body.group), text(body.backup_group)]) {
      if (g !== "" && !HUB_GROUPS.has(g)) return "当前用户组无权使用指定的分组";
    }
  }
  return null;
}

/**
 * The token's fields from a full-replacement body: every field the family writes, a missing one
 * its zero value (0 expiry, limits off), as the families' `Select(...)` updates do.
 */
function fieldsOf(family: StandInFamily, body: Record<string, unknown>, creating: boolean) {
  const fields: Partial<StandInToken> = {
    name: text(body.name),
    remainQuota: int(body.remain_quota),
    unlimited: body.unlimited_quota === true,
    // Creation stores a missing expiry as -1 (the column's default); an update writes its 0.
    expiredTime: body.expired_time === undefined ? (creating ? -1 : 0) : int(body.expired_time),
  };
  if (family === "one-api") {
    fields.limits = { models: list(text(body.models), /,/), ips: list(text(body.subnet), /,/) };
  } else if (hubLike(family)) {
    const setting = isRow(body.setting) ? body.setting : {};
    const limits = isRow(setting.limits) ? setting.limits : {};
    const m = isRow(limits.limit_model_setting) ? limits.limit_model_setting : {};
    const ip = isRow(limits.limits_ip_setting) ? limits.limits_ip_setting : {};
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);
    fields.limits = {
      models: m.enabled === true ? strings(m.models) : [],
      ips: ip.enabled === true ? strings(ip.whitelist) : [],
    };
    fields.group = text(body.group);
    fields.backupGroup = text(body.backup_group);
  } else {
    fields.limits = {
      models: body.model_limits_enabled === true ? list(text(body.model_limits), /,/) : [],
      ips: list(text(body.allow_ips), /\n/),
    };
    fields.group = text(body.group);
    if (family === "new-api") fields.crossGroupRetry = body.cross_group_retry === true;
  }
  return fields;
}

async function create(state: TokenWriteState, user: GatewayUser, req: IncomingMessage, res: ServerResponse) {
  const body = await state.readBody(req);
  if (!isRow(body)) return fail(res, "无效的参数");
  const tokens = tokensOf(user);
  const problem = refusal(state, body, tokens.length, true);
  if (problem) return fail(res, problem);
  const now = Math.floor(Date.now() / 1000);
  const fields = fieldsOf(state.family, body, true);
  const token: StandInToken = {
    id: tokens.reduce((max, t) => Math.max(max, t.id), 0) + 1,
    key: key48(),
    status: 1,
    createdTime: now,
    accessedTime: 0,
    usedQuota: 0,
    name: fields.name ?? "",
    remainQuota: fields.remainQuota ?? 0,
    unlimited: fields.unlimited ?? false,
    expiredTime: fields.expiredTime ?? -1,
    group: fields.group ?? "",
    limits: fields.limits,
    backupGroup: fields.backupGroup,
    crossGroupRetry: fields.crossGroupRetry,
  };
  tokens.push(token);
  if (state.family === "one-api") return ok(res, tokenRow("one-api", token, user.data.id));
  if (state.family === "done-hub") return ok(res, { id: token.id, key: token.key });
  return send(res, 200, { success: true, message: "" });
}

function enableRefusal(t: StandInToken): string | null {
  const now = Math.floor(Date.now() / 1000);
  if (t.status === 3 && t.expiredTime !== -1 && t.expiredTime < now) {
    return "令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期";
  }
  if (t.status === 4 && t.remainQuota <= 0 && !t.unlimited) {
    return "令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度";
  }
  return null;
}

async function update(state: TokenWriteState, user: GatewayUser, req: IncomingMessage, res: ServerResponse, url: URL) {
  const body = await state.readBody(req);
  if (!isRow(body)) return fail(res, "无效的参数");
  const token = tokensOf(user).find((t) => t.id === int(body.id) && !t.deleted);
  if (!token) return fail(res, "record not found");
  if (url.searchParams.get("status_only")) {
    const status = int(body.status);
    if (status === 1) {
      const problem = enableRefusal(token);
      if (problem) return fail(res, problem);
    }
    token.status = status as StandInToken["status"];
    return ok(res, answerRow(state.family, token, user));
  }
  const problem = refusal(state, body, 0, false);
  if (problem) return fail(res, problem);
  const kept = state.family === "done-hub" && body.unlimited_quota === true ? token.remainQuota : null;
  Object.assign(token, fieldsOf(state.family, body, false));
  if (kept !== null) token.remainQuota = kept;
  return ok(res, answerRow(state.family, token, user));
}

function remove(state: TokenWriteState, user: GatewayUser, id: string, res: ServerResponse) {
  const n = /^\d+$/.test(id) ? Number(id) : 0;
  if (n === 0) return fail(res, "id 或 userId 为空！");
  const tokens = tokensOf(user);
  const token = tokens.find((t) => t.id === n && !t.deleted);
  if (!token) return fail(res, "record not found");
  if (state.family === "one-api") tokens.splice(tokens.indexOf(token), 1);
  else token.deleted = true;
  return send(res, 200, { success: true, message: "" });
}

async function batchRemove(state: TokenWriteState, user: GatewayUser, req: IncomingMessage, res: ServerResponse) {
  const body = await state.readBody(req);
  const ids = isRow(body) && Array.isArray(body.ids) ? body.ids.filter((x): x is number => typeof x === "number") : [];
  if (ids.length === 0) return fail(res, "Invalid parameters");
  let count = 0;
  for (const t of tokensOf(user)) {
    if (ids.includes(t.id) && !t.deleted) {
      t.deleted = true;
      count++;
    }
  }
  return ok(res, count);
}

/** Answers a token write route; false when the family has no such route (the caller says 404). */
export function answerTokenWrite(
  state: TokenWriteState,
  user: GatewayUser,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): boolean {
  const method = req.method ?? "GET";
  const path = url.pathname;
  const redirect = (to: string) => {
    // gin's RedirectTrailingSlash: 307 for everything but GET.
    res.writeHead(method === "GET" ? 301 : 307, { Location: `${to}${url.search}` });
    res.end();
    return true;
  };
  if (path === "/api/token" && (method === "POST" || method === "PUT")) return redirect("/api/token/");
  if (/^\/api\/token\/\d+\/$/.test(path) && method !== "POST") return redirect(path.slice(0, -1));
  if (path === "/api/token/" && method === "POST") {
    void create(state, user, req, res);
    return true;
  }
  if (path === "/api/token/" && method === "PUT") {
    void update(state, user, req, res, url);
    return true;
  }
  if (path === "/api/token/batch" && method === "POST" && state.family === "new-api") {
    void batchRemove(state, user, req, res);
    return true;
  }
  const reveal = /^\/api\/token\/(\d+)\/key$/.exec(path);
  if (reveal && method === "POST" && state.family === "new-api") {
    if (!state.takeCritical()) {
      res.writeHead(429);
      res.end();
      return true;
    }
    const token = tokensOf(user).find((t) => t.id === Number(reveal[1]) && !t.deleted);
    if (!token) fail(res, "record not found");
    else ok(res, { key: token.key });
    return true;
  }
  const one = /^\/api\/token\/([^/]+)$/.exec(path);
  if (one && method === "DELETE") {
    remove(state, user, one[1] ?? "", res);
    return true;
  }
  if (one && method === "GET") {
    const token = tokensOf(user).find((t) => String(t.id) === one[1] && !t.deleted);
    if (!token) fail(res, "record not found");
    else ok(res, answerRow(state.family, token, user));
    return true;
  }
  return false;
}
