/**
 * Calls a gateway site's `GET /api/user/self` (one-api / new-api family, see gateway.md).
 * Every failure is a GatewayError whose message is a short Chinese reason, never the token.
 */

import { readCapped } from "../net/body";
import { guardedFetch, isGuarded, PRIVATE_REFUSAL, refusedForAddress } from "../net/site-guard";
import { env } from "../core/env";
import { logEvent } from "../core/log";
import { metrics, siteLabel } from "../core/metrics";
import { SiteBusy, pauseSite, throughGate } from "./gate";

const MAX_RESPONSE_BYTES = 1024 * 1024;

/** Header names under which the new-api family and its forks read the user id. */
export const USER_ID_HEADERS = [
  "New-Api-User",
  "Veloera-User",
  "voapi-user",
  "X-Api-User",
  "Rix-Api-User",
  "neo-api-user",
] as const;

/** The short reasons that follow `无法连接站点: `; every failure of the call is one of these. */
export const REASON = {
  timeout: "连接超时",
  refused: "连接被拒绝",
  dns: "无法解析站点域名",
  reset: "连接被重置",
  tls: "TLS 连接失败",
  redirect: "站点返回了重定向",
  badHeader: "请求头包含非法字符",
  badUrl: "站点地址无效",
  network: "网络错误",
  tooLarge: "响应过大",
  notJson: (status: number) => `站点返回的不是 JSON（HTTP ${status}）`,
  emptyJson: "站点返回了空的 JSON",
  noUserInfo: "站点响应缺少用户信息",
  unavailable: "服务暂时不可用",
  busy: "站点繁忙，请稍后再试",
} as const;

export class GatewayError extends Error {}

/** One call to a site (a GET unless said). The access token and user id are sent only when given. */
export type SiteCall = {
  method?: "GET" | "POST" | "PUT" | "DELETE";
  /** Sent as JSON. */
  body?: unknown;
  siteUrl: string;
  /** A canonical path of gateway-user-api.md, e.g. `/api/log/self` or `/api/token/`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  accessToken?: string;
  userId?: number | string;
  acceptLanguage?: string | null;
  timeoutMs: number;
  /** Called only on a public address (a workspace's own site); unset: as net/site-guard.ts knows the site. */
  guard?: boolean;
};

/** A site's answer as received: throttling (429) and refusals (401) are for the caller to read. */
export type SiteAnswer = { status: number; retryAfter: string | null; text: string };

function siteUrlOf(call: SiteCall): string {
  const url = new URL(`${call.siteUrl.replace(/\/+$/, "")}${call.path}`);
  for (const [key, value] of Object.entries(call.query ?? {})) {
    if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
  }
  return url.toString();
}

/** The connection was reset or closed under the request (no answer came on it). */
function wasReset(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } } | null)?.cause?.code ?? "";
  return code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE";
}

function reasonFor(error: unknown, signal: AbortSignal): string {
  if (error instanceof GatewayError) return error.message;
  if (refusedForAddress(error)) return PRIVATE_REFUSAL;
  if (signal.aborted) return REASON.timeout;
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  const code = cause?.code ?? "";
  const text = `${cause?.message ?? ""} ${(error as Error | null)?.message ?? ""}`;
  if (code === "ECONNREFUSED") return REASON.refused;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return REASON.dns;
  if (wasReset(error)) return REASON.reset;
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" || code === "ETIMEDOUT") {
    return REASON.timeout;
  }
  if (code.startsWith("ERR_TLS") || /certificate|SSL|TLS/i.test(text)) return REASON.tls;
  if (/header/i.test(text) && /invalid/i.test(text)) return REASON.badHeader;
  if (code === "ERR_INVALID_URL" || /Invalid URL/i.test(text)) return REASON.badUrl;
  return REASON.network;
}

/**
 * One call within the time limit and size cap, following no redirect (a site that redirects could
 * bounce this server, user-id headers and all, to an internal address).
 */
export async function callSite(call: SiteCall): Promise<SiteAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), call.timeoutMs);
  const started = performance.now();
  let outcome = "network";
  try {
    const headers = new Headers({
      Accept: "application/json",
      "Accept-Language": call.acceptLanguage?.trim() || "zh-CN",
    });
    if (call.accessToken !== undefined) headers.set("Authorization", call.accessToken);
    if (call.userId !== undefined) {
      for (const name of USER_ID_HEADERS) headers.set(name, String(call.userId));
    }
    if (call.body !== undefined) headers.set("Content-Type", "application/json");
    const init: RequestInit = {
      method: call.method ?? "GET",
      headers,
      ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
      redirect: "manual",
      signal: controller.signal,
    };
    // A workspace's own site is called only on a public address (net/site-guard.ts).
    const guarded = call.guard ?? isGuarded(call.siteUrl);
    const send = () =>
      guarded ? guardedFetch(siteUrlOf(call), init, env().WORKSPACE_SITES_ALLOW_PRIVATE) : fetch(siteUrlOf(call), init);
    let response: Response;
    try {
      response = await send();
    } catch (error) {
      // A kept-alive connection the site closed as it was reused: a read is sent once more, on a
      // new one (a write is not: the site may have taken it).
      if ((call.method ?? "GET") !== "GET" || controller.signal.aborted || !wasReset(error)) throw error;
      response = await send();
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      throw new GatewayError(REASON.redirect);
    }
    const body = await readCapped(response, MAX_RESPONSE_BYTES, () => new GatewayError(REASON.tooLarge));
    outcome = response.status === 429 ? "429" : `${Math.floor(response.status / 100)}xx`;
    return { status: response.status, retryAfter: response.headers.get("retry-after"), text: body.toString("utf8") };
  } catch (error) {
    if (controller.signal.aborted) outcome = "timeout";
    throw new GatewayError(reasonFor(error, controller.signal));
  } finally {
    clearTimeout(timer);
    noteSiteCall(call, outcome, performance.now() - started);
  }
}

/** A site call in the metrics and the log (its host and canonical path, never its query or headers). */
function noteSiteCall(call: SiteCall, outcome: string, ms: number): void {
  let site = "invalid";
  try {
    site = new URL(call.siteUrl).host;
  } catch {
    // Counted as "invalid".
  }
  const m = metrics();
  const label = siteLabel(site);
  m.siteCalls.inc({ site: label, outcome });
  m.siteSeconds.observe({ site: label }, ms / 1000);
  logEvent("site.call", { site, method: call.method ?? "GET", path: call.path, outcome, ms: Math.round(ms * 10) / 10 });
}

/** The answer's body as JSON, whatever its HTTP status (gateways are not reliable there). */
export function parseAnswer(answer: SiteAnswer): unknown {
  try {
    return JSON.parse(answer.text.replace(/^\uFEFF/, "")) as unknown;
  } catch {
    throw new GatewayError(REASON.notJson(answer.status));
  }
}

/**
 * Login's call: `GET /api/user/self` with the token and the user-id headers, through the site's
 * gate (first in line, but inside its budget and any pause after a 429; a slot further away than
 * the call's time limit is 站点繁忙).
 */
export async function fetchUserSelf(
  req: Omit<SiteCall, "path" | "query">,
  gate: { siteId: number; perMinute: number; lane?: string | undefined },
): Promise<unknown> {
  let answer: SiteAnswer;
  // A sign-in goes first; a workspace's verification takes its turn in its lane (LoginDeps.lane).
  const budget =
    gate.lane === undefined
      ? { perMinute: gate.perMinute, signIn: true, maxWaitMs: req.timeoutMs }
      : { perMinute: gate.perMinute, account: gate.lane, maxWaitMs: req.timeoutMs };
  try {
    answer = await throughGate(gate.siteId, budget, () => callSite({ ...req, path: "/api/user/self" }));
  } catch (error) {
    if (error instanceof SiteBusy) throw new GatewayError(REASON.busy);
    throw error;
  }
  if (answer.status === 429) {
    pauseSite(gate.siteId, answer.retryAfter);
    throw new GatewayError(REASON.busy);
  }
  return parseAnswer(answer);
}
