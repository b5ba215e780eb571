/**
 * A gateway site as a signed-in user sees it, for each family of gateway-user-api.md: new-api
 * (current and 2025-04), Veloera, one-api, one-hub and done-hub. Auth, page bases and sizes,
 * answer shapes, masked or zero ids, `other` as a JSON string vs `metadata` as an object, 301 on a
 * trailing-slash mismatch and 429 with an empty body, as those sites do; and the writes a user
 * makes (tokens, redeeming a code, checking in) with their side effects. Used by `npm run demo`
 * and as the stand-in the tests run against.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { ok, send } from "./stand-in/answer";
import { logsAnswer, statAnswer } from "./stand-in/logs";
import { PLAN_PATHS, plansAnswer } from "./stand-in/plans";
import { answerPrices } from "./stand-in/prices";
import { statusData } from "./stand-in/status";
import { tokensAnswer, topupsAnswer } from "./stand-in/tokens";
import type { GatewayOptions, GatewayUser, RunningGateway, StandInFamily } from "./stand-in/types";
import { answerTokenWrite, isTokenWrite, type TokenWriteState } from "./stand-in/token-writes";
import { answerWrite, isWrite, jsonBody, type WriteState } from "./stand-in/writes";

export type * from "./stand-in/types";

const CANONICAL = [
  "/api/status",
  "/api/user/self",
  "/api/log/self",
  "/api/log/self/stat",
  "/api/data/self",
  "/api/token/",
  "/api/user/topup/self",
  ...PLAN_PATHS,
];

export function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const requests: RunningGateway["requests"] = [];
  const family = options.family ?? (options.requireUserHeader ? "new-api" : "one-api");
  const headerFamily = family === "new-api" || family === "new-api-legacy" || family === "veloera";
  const requireHeader = options.requireUserHeader ?? (options.family !== undefined && headerFamily);
  const userHeader = family === "veloera" ? "Veloera-User" : "New-Api-User";
  const failureStatus = options.failureStatus ?? 200;
  const fail = (res: ServerResponse, message: string, status = failureStatus) =>
    send(res, status, { success: false, message, ...(status === 401 ? { code: "AUTH_UNAUTHORIZED" } : {}) });
  const accepted: number[] = [];
  let throttled = 0;
  const critical: number[] = [];
  const takeCritical = () => {
    const { max, windowMs } = options.criticalLimit ?? { max: 20, windowMs: 20 * 60_000 };
    const now = Date.now();
    while (critical.length > 0 && (critical[0] ?? 0) <= now - windowMs) critical.shift();
    if (critical.length >= max) return false;
    critical.push(now);
    return true;
  };
  const tokenWrites: TokenWriteState = {
    family,
    quotaPerUnit: Number(statusData(family, options.status ?? {}).quota_per_unit ?? 500_000),
    takeCritical,
    readBody: jsonBody,
  };
  const writes: WriteState = {
    takeCritical,
    family,
    codes: options.codes ?? [],
    compliance: options.compliance ?? true,
    status: () => statusData(family, options.status ?? {}),
    checkinReward: options.checkinReward ?? 5000,
  };
  let inFlight = 0;
  let peak = 0;

  /** The signed-in user of a request, or null once the failure is answered. */
  const authenticate = (req: IncomingMessage, res: ServerResponse): GatewayUser | null => {
    const raw = req.headers.authorization ?? "";
    // Current new-api takes a bare token or `Bearer <token>`; older builds strip "Bearer " once.
    const token = raw.replace(/^Bearer /i, "");
    if (!token) {
      fail(res, "无权进行此操作，未登录且未提供 access token", 401);
      return null;
    }
    const user = options.users.find((u) => u.accessToken === token);
    if (!user) {
      fail(res, "无权进行此操作，access token 无效");
      return null;
    }
    if (requireHeader) {
      const header = req.headers[userHeader.toLowerCase()];
      if (header === undefined || header === "") {
        fail(res, `无权进行此操作，未提供 ${userHeader}`, 401);
        return null;
      }
      if (!/^-?\d+$/.test(String(header))) {
        fail(res, `无权进行此操作，${userHeader} 格式错误`, 401);
        return null;
      }
      if (Number(header) !== user.data.id) {
        fail(res, `无权进行此操作，${userHeader} 与登录用户不匹配`, 401);
        return null;
      }
    }
    if (user.data.status === 2) {
      fail(res, "用户已被封禁");
      return null;
    }
    return user;
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://stand-in");
    const path = url.pathname;
    requests.push({ method: req.method ?? "GET", path, query: url.search, headers: req.headers, at: Date.now() });
    if (options.rateLimit) {
      const now = Date.now();
      while (accepted.length > 0 && (accepted[0] ?? 0) <= now - options.rateLimit.windowMs) accepted.shift();
      if (accepted.length >= options.rateLimit.max) {
        throttled++;
        res.writeHead(429);
        res.end();
        return;
      }
      accepted.push(now);
    }
    if (options.intercept?.(req, res)) return;
    if (isTokenWrite(req.method ?? "GET", path)) {
      const user = authenticate(req, res);
      if (!user) return;
      if (!answerTokenWrite(tokenWrites, user, req, res, url)) send(res, 404, { success: false, message: "Not Found" });
      return;
    }
    if (isWrite(req.method ?? "GET", path)) {
      const user = authenticate(req, res);
      if (!user) return;
      if (!answerWrite(writes, user, req, res, url)) send(res, 404, { success: false, message: "Not Found" });
      return;
    }
    if (answerPrices(family, options, req, res, path, () => authenticate(req, res))) return;
    if (req.method === "GET" && !CANONICAL.includes(path)) {
      const other = path.endsWith("/") ? path.slice(0, -1) : `${path}/`;
      if (CANONICAL.includes(other)) {
        // gin's RedirectTrailingSlash.
        res.writeHead(301, { Location: `${other}${url.search}` });
        res.end();
        return;
      }
    }
    if (req.method !== "GET" || !CANONICAL.includes(path)) {
      send(res, 404, { success: false, message: "Not Found" });
      return;
    }
    if (path === "/api/status") return ok(res, statusData(family, options.status ?? {}));
    const user = authenticate(req, res);
    if (!user) return;
    const q = url.searchParams;
    switch (path) {
      case "/api/user/self":
        return ok(res, selfOf(family, user));
      case "/api/log/self":
        return logsAnswer(family, user, q, res);
      case "/api/log/self/stat":
        return statAnswer(family, user, q, res);
      case "/api/token/":
        return tokensAnswer(family, user, q, res);
      case "/api/user/topup/self":
        if (family !== "new-api") {
          res.writeHead(404, { "Content-Type": "text/plain" });
          res.end("404 page not found");
          return;
        }
        return topupsAnswer(user, q, res);
      case "/api/subscription/self":
      case "/api/subscription/plans":
        // Subscriptions came with new-api 2026-02; older builds and other families have no such route.
        if (family !== "new-api")
          return send(res, 404, { error: { message: "Invalid URL", type: "invalid_request_error" } });
        return plansAnswer(path, user, options.plans ?? [], options.compliance ?? true, res);
      default:
        send(res, 404, { success: false, message: "Not Found" });
    }
  };

  const server = createServer((req, res) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    res.on("close", () => inFlight--);
    if (options.latencyMs) setTimeout(() => handle(req, res), options.latencyMs);
    else handle(req, res);
  });

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${options.host ?? "127.0.0.1"}:${port}`,
        server,
        family,
        requests,
        throttled: () => throttled,
        peakInFlight: () => peak,
        inFlight: () => inFlight,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/**
 * The user object as the family answers it: older builds answer the whole user row, the access
 * token in it (one-api blanks it), with an empty password and verification code.
 */
function selfOf(family: StandInFamily, user: { accessToken: string; data: Record<string, unknown> }) {
  if (family === "new-api") return user.data;
  const token = family === "one-api" ? "" : user.accessToken;
  return { ...user.data, password: "", verification_code: "", access_token: token };
}

/** A user object shaped like current new-api's `GET /api/user/self` data. */
export function newApiUser(id: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    username: `user${id}`,
    display_name: `用户 ${id}`,
    role: 1,
    status: 1,
    email: "",
    group: "default",
    quota: 25_000_000,
    used_quota: 1_250_000,
    request_count: 42,
    aff_code: "abcd",
    aff_count: 0,
    aff_quota: 0,
    aff_history_quota: 0,
    inviter_id: 0,
    setting: "{}",
    permissions: {},
    ...overrides,
  };
}
