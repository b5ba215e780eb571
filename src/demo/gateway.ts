/**
 * A small gateway site with the `GET /api/user/self` contract of the one-api / new-api family:
 * a bare or `Bearer` access token, the `New-Api-User` header that new-api (2025–mid 2026) requires,
 * failures answered with HTTP 200 (older builds) or 401 (current new-api). Used by `npm run demo`
 * and as the stand-in the tests sign in against.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type GatewayUser = { accessToken: string; data: Record<string, unknown> };

export type GatewayOptions = {
  users: GatewayUser[];
  /** Refuse tokens without a matching New-Api-User header (new-api from 2025 to mid 2026). */
  requireUserHeader?: boolean;
  /** HTTP status of failure answers: 200 like older builds, 401 like current new-api. */
  failureStatus?: 200 | 401;
  /** Lets a test take over a request before the contract answers it; return true when handled. */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
  host?: string;
  port?: number;
};

export type RunningGateway = {
  url: string;
  server: Server;
  /** Requests seen, newest last (method, path, headers). */
  requests: { method: string; path: string; headers: IncomingMessage["headers"] }[];
  close: () => Promise<void>;
};

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  res.end(text);
}

export function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const requests: RunningGateway["requests"] = [];
  const failureStatus = options.failureStatus ?? 200;
  const fail = (res: ServerResponse, message: string, status = failureStatus) =>
    send(res, status, { success: false, message, ...(status === 401 ? { code: "AUTH_UNAUTHORIZED" } : {}) });

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    requests.push({ method: req.method ?? "GET", path, headers: req.headers });
    if (options.intercept?.(req, res)) return;
    if (req.method !== "GET" || path !== "/api/user/self") {
      send(res, 404, { success: false, message: "Not Found" });
      return;
    }
    const raw = req.headers.authorization ?? "";
    // Current new-api takes a bare token or `Bearer <token>`; older builds strip "Bearer " once.
    const token = raw.replace(/^Bearer /i, "");
    if (!token) {
      fail(res, "无权进行此操作，未登录且未提供 access token", 401);
      return;
    }
    const user = options.users.find((u) => u.accessToken === token);
    if (!user) {
      fail(res, "无权进行此操作，access token 无效");
      return;
    }
    if (options.requireUserHeader) {
      const header = req.headers["new-api-user"];
      if (header === undefined || header === "") {
        fail(res, "无权进行此操作，未提供 New-Api-User", 401);
        return;
      }
      if (!/^-?\d+$/.test(String(header))) {
        fail(res, "无权进行此操作，New-Api-User 格式错误", 401);
        return;
      }
      if (Number(header) !== user.data.id) {
        fail(res, "无权进行此操作，New-Api-User 与登录用户不匹配", 401);
        return;
      }
    }
    if (user.data.status === 2) {
      fail(res, "用户已被封禁");
      return;
    }
    send(res, 200, { success: true, message: "", data: user.data });
  });

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${options.host ?? "127.0.0.1"}:${port}`,
        server,
        requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
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
