/**
 * Calls a gateway site's `GET /api/user/self` (one-api / new-api family, see gateway.md).
 * Every failure is a GatewayError whose message is a short Chinese reason, never the token.
 */

import { readCapped } from "../net/body";

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
} as const;

export class GatewayError extends Error {}

type UserSelfRequest = {
  siteUrl: string;
  accessToken: string;
  userId: number | string;
  acceptLanguage?: string | null;
  timeoutMs: number;
};

function userSelfUrl(siteUrl: string): string {
  return `${siteUrl.replace(/\/+$/, "")}/api/user/self`;
}

function reasonFor(error: unknown, signal: AbortSignal): string {
  if (error instanceof GatewayError) return error.message;
  if (signal.aborted) return REASON.timeout;
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  const code = cause?.code ?? "";
  const text = `${cause?.message ?? ""} ${(error as Error | null)?.message ?? ""}`;
  if (code === "ECONNREFUSED") return REASON.refused;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return REASON.dns;
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE") return REASON.reset;
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" || code === "ETIMEDOUT") {
    return REASON.timeout;
  }
  if (code.startsWith("ERR_TLS") || /certificate|SSL|TLS/i.test(text)) return REASON.tls;
  if (/header/i.test(text) && /invalid/i.test(text)) return REASON.badHeader;
  if (code === "ERR_INVALID_URL" || /Invalid URL/i.test(text)) return REASON.badUrl;
  return REASON.network;
}

/** The site's answer parsed as JSON, whatever its HTTP status (gateways are not reliable there). */
export async function fetchUserSelf(req: UserSelfRequest): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), req.timeoutMs);
  try {
    const userId = String(req.userId);
    const headers = new Headers({
      Accept: "application/json",
      "Accept-Language": req.acceptLanguage?.trim() || "zh-CN",
      Authorization: req.accessToken,
    });
    for (const name of USER_ID_HEADERS) headers.set(name, userId);
    const response = await fetch(userSelfUrl(req.siteUrl), {
      method: "GET",
      headers,
      // A site that redirects could bounce this server, user-id headers and all, to an internal address.
      redirect: "manual",
      signal: controller.signal,
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      throw new GatewayError(REASON.redirect);
    }
    const text = (await readCapped(response, MAX_RESPONSE_BYTES, () => new GatewayError(REASON.tooLarge))).toString(
      "utf8",
    );
    try {
      return JSON.parse(text.replace(/^\uFEFF/, "")) as unknown;
    } catch {
      throw new GatewayError(REASON.notJson(response.status));
    }
  } catch (error) {
    throw new GatewayError(reasonFor(error, controller.signal));
  } finally {
    clearTimeout(timer);
  }
}
