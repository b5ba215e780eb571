/**
 * The stand-in's writes, as gateway-actions.md §7 describes them per family: redeeming a code
 * (`POST /api/user/topup`) and checking in (new-api `GET|POST /api/user/checkin`, Veloera
 * `GET /api/user/check_in_status` + `POST /api/user/check_in`), with their side effects (the quota
 * rises, the code is spent, a log entry is written) and their messages.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ok, send } from "./answer";
import type { GatewayUser, StandInCode, StandInFamily, StandInLog } from "./types";

export type WriteState = {
  family: StandInFamily;
  codes: StandInCode[];
  /** new-api's payment compliance confirmed by its administrator (redeeming is closed until then). */
  compliance: boolean;
  /** The status flags the writes follow (`checkin_enabled`, `check_in_enabled`, `turnstile_check`). */
  status: () => Record<string, unknown>;
  /** new-api's check-in reward range; Veloera's `CheckInQuota`. */
  checkinReward: number;
  /** new-api's critical budget, shared by redeems and key reveals: true when one more call is allowed, counting it. */
  takeCritical: () => boolean;
};

const WRITE_ROUTES = new Set([
  "POST /api/user/topup",
  "GET /api/user/checkin",
  "POST /api/user/checkin",
  "GET /api/user/check_in_status",
  "POST /api/user/check_in",
]);

export const isWrite = (method: string, path: string) => WRITE_ROUTES.has(`${method} ${path}`);

const MAX_BODY = 64 * 1024;

export async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return null;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return null;
  }
}

const fail = (res: ServerResponse, message: string) => send(res, 200, { success: false, message });
const usdText = (quota: number) => `＄${(quota / 500_000).toFixed(6)} 额度`;
const utcDay = (now: number) => new Date(now).toISOString().slice(0, 10);

function note(user: GatewayUser, type: number, content: string, quota = 0): void {
  const log: StandInLog = {
    createdAt: Math.floor(Date.now() / 1000),
    type,
    model: "",
    tokenName: "",
    tokenId: 0,
    quota,
    promptTokens: 0,
    completionTokens: 0,
    durationMs: 0,
    stream: false,
    content,
  };
  (user.logs ??= []).push(log);
}

const addQuota = (user: GatewayUser, quota: number) => {
  user.data.quota = Number(user.data.quota ?? 0) + quota;
};

async function redeem(state: WriteState, user: GatewayUser, req: IncomingMessage, res: ServerResponse) {
  const { family } = state;
  const newApi = family === "new-api";
  if (newApi && !state.takeCritical()) {
    // The critical limiter answers before the handler, with an empty body.
    res.writeHead(429);
    res.end();
    return;
  }
  if (newApi && !state.compliance) {
    return fail(res, "支付、兑换码、订阅计划和邀请返利功能已禁用。管理员需先确认合规声明后方可启用。");
  }
  const body = await jsonBody(req);
  const raw = body !== null && typeof body === "object" ? (body as { key?: unknown }).key : undefined;
  const key = typeof raw === "string" ? raw : "";
  if (key === "") return fail(res, "未提供兑换码");
  const code = state.codes.find((c) => c.key === key);
  const now = Math.floor(Date.now() / 1000);
  const expired = code?.expiresAt !== undefined && code.expiresAt !== 0 && code.expiresAt < now;
  if (!code || code.status !== 1 || expired) {
    // Current new-api says the same for every bad code; the others say which.
    if (newApi) return fail(res, "兑换失败，请稍后重试");
    if (!code || code.status === 2) return fail(res, "兑换失败，无效的兑换码");
    if (code.status === 3) return fail(res, "兑换失败，该兑换码已被使用");
    return fail(res, "兑换失败，兑换码已过期");
  }
  code.status = 3;
  addQuota(user, code.quota);
  const hub = family === "one-hub" || family === "done-hub";
  note(
    user,
    1,
    `通过兑换码充值 ${usdText(code.quota)}${family === "one-api" ? "" : `，兑换码ID ${code.id ?? 1}`}`,
    hub ? code.quota : 0,
  );
  if (family === "veloera") return ok(res, { quota: code.quota, is_gift: false });
  return ok(res, code.quota);
}

function checkinDays(user: GatewayUser): Array<{ date: string; quota: number }> {
  const holder = user as GatewayUser & { checkins?: Array<{ date: string; quota: number }> };
  return (holder.checkins ??= []);
}

function newApiCheckin(state: WriteState, user: GatewayUser, method: string, url: URL, res: ServerResponse) {
  const status = state.status();
  if (status.checkin_enabled !== true) return fail(res, "签到功能未启用");
  const days = checkinDays(user);
  const today = utcDay(Date.now());
  if (method === "GET") {
    const month = url.searchParams.get("month") ?? today.slice(0, 7);
    const records = days
      .filter((d) => d.date.startsWith(month))
      .map((d) => ({ checkin_date: d.date, quota_awarded: d.quota }));
    // The check-in GET answers without a `message` key.
    return send(res, 200, {
      data: {
        enabled: true,
        min_quota: state.checkinReward,
        max_quota: state.checkinReward,
        stats: {
          total_quota: days.reduce((s, d) => s + d.quota, 0),
          total_checkins: days.length,
          checkin_count: records.length,
          checked_in_today: days.some((d) => d.date === today),
          records,
        },
      },
      success: true,
    });
  }
  if (status.turnstile_check === true && !url.searchParams.get("turnstile")) return fail(res, "Turnstile token 为空");
  if (days.some((d) => d.date === today)) return fail(res, "今日已签到");
  const quota = state.checkinReward;
  days.push({ date: today, quota });
  addQuota(user, quota);
  note(user, 4, `用户签到，获得额度 ${usdText(quota)}`);
  return send(res, 200, { data: { quota_awarded: quota, checkin_date: today }, message: "签到成功", success: true });
}

function veloeraCheckin(state: WriteState, user: GatewayUser, method: string, res: ServerResponse) {
  const days = checkinDays(user);
  const today = utcDay(Date.now());
  const done = days.some((d) => d.date === today);
  // The status does not look at the enabled flag.
  if (method === "GET") return ok(res, { can_check_in: !done });
  if (state.status().check_in_enabled !== true) return fail(res, "签到功能未启用");
  if (done) return fail(res, "你今天已经签到过了");
  const quota = state.checkinReward;
  days.push({ date: today, quota });
  addQuota(user, quota);
  note(user, 5, `签到奖励 ${usdText(quota)}`);
  return send(res, 200, { data: { quota }, message: "签到成功", success: true });
}

/** Answers a write route of the family; false when the family has no such route (the caller says 404). */
export function answerWrite(
  state: WriteState,
  user: GatewayUser,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): boolean {
  const method = req.method ?? "GET";
  const path = url.pathname;
  if (path === "/api/user/topup") {
    void redeem(state, user, req, res);
    return true;
  }
  if (path === "/api/user/checkin" && state.family === "new-api") {
    newApiCheckin(state, user, method, url, res);
    return true;
  }
  if ((path === "/api/user/check_in_status" || path === "/api/user/check_in") && state.family === "veloera") {
    veloeraCheckin(state, user, method, res);
    return true;
  }
  return false;
}
