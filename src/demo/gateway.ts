/**
 * A gateway site as a signed-in user sees it, for each family of gateway-user-api.md: new-api
 * (current and 2025-04), Veloera, one-api, one-hub and done-hub. Auth, page bases and sizes,
 * answer shapes, masked or zero ids, `other` as a JSON string vs `metadata` as an object, 301 on a
 * trailing-slash mismatch and 429 with an empty body, as those sites do. Used by `npm run demo`
 * and as the stand-in the tests run against.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type StandInFamily = "new-api" | "new-api-legacy" | "veloera" | "one-api" | "one-hub" | "done-hub";

/** One usage-log row; `type` is the family's own number (1 top-up, 2 consume, …). */
export type StandInLog = {
  createdAt: number;
  type: number;
  model: string;
  tokenName: string;
  tokenId: number;
  quota: number;
  promptTokens: number;
  completionTokens: number;
  durationMs: number;
  stream: boolean;
  content: string;
  group?: string;
};

export type StandInToken = {
  id: number;
  name: string;
  /** The full key as stored (48 characters for new-api, one-api and Veloera). */
  key: string;
  status: 1 | 2 | 3 | 4;
  createdTime: number;
  accessedTime: number;
  /** -1: never. */
  expiredTime: number;
  remainQuota: number;
  unlimited: boolean;
  usedQuota: number;
  group: string;
};

export type StandInTopup = {
  id: number;
  amount: number;
  money: number;
  tradeNo: string;
  paymentMethod: string;
  createTime: number;
  completeTime: number;
  status: "pending" | "success" | "failed" | "expired";
};

export type GatewayUser = {
  accessToken: string;
  data: Record<string, unknown>;
  logs?: StandInLog[];
  tokens?: StandInToken[];
  topups?: StandInTopup[];
};

export type GatewayOptions = {
  users: GatewayUser[];
  /** Which gateway to be; new-api when `requireUserHeader`, else one-api (the sign-in stand-ins). */
  family?: StandInFamily;
  /** Refuse tokens without a matching user-id header (new-api from 2024-07, Veloera). */
  requireUserHeader?: boolean;
  /** HTTP status of failure answers: 200 like older builds, 401 like current new-api. */
  failureStatus?: 200 | 401;
  /** Extra or replaced `/api/status` fields (money settings, version). */
  status?: Record<string, unknown>;
  /** The global API limit: at most `max` requests per `windowMs` per client, then 429 with an empty body. */
  rateLimit?: { max: number; windowMs: number };
  /** Delay before every answer, as a distant site has. */
  latencyMs?: number;
  /** Lets a test take over a request before the contract answers it; return true when handled. */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
  host?: string;
  port?: number;
};

export type RunningGateway = {
  url: string;
  server: Server;
  family: StandInFamily;
  /** Requests seen, newest last (method, path, query, headers, arrival in ms since the epoch). */
  requests: { method: string; path: string; query: string; headers: IncomingMessage["headers"]; at: number }[];
  /** Requests answered 429. */
  throttled: () => number;
  /** Most requests in flight at once so far. */
  peakInFlight: () => number;
  close: () => Promise<void>;
};

const CANONICAL = [
  "/api/status",
  "/api/user/self",
  "/api/log/self",
  "/api/log/self/stat",
  "/api/data/self",
  "/api/token/",
  "/api/user/topup/self",
];

const THIRTY_DAYS = 30 * 86_400;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

const ok = (res: ServerResponse, data: unknown) => send(res, 200, { data, message: "", success: true });

/** new-api's `MaskTokenKey`: first 4 + 10 stars + last 4 (gateway-user-api.md §3.7). */
function naMask(key: string): string {
  if (key.length > 8) return `${key.slice(0, 4)}**********${key.slice(-4)}`;
  if (key.length > 4) return `${key.slice(0, 2)}****${key.slice(-2)}`;
  return "*".repeat(key.length);
}

function statusData(family: StandInFamily, extra: Record<string, unknown>): Record<string, unknown> {
  const common = { start_time: 1_750_140_000, quota_per_unit: 500_000, display_in_currency: true };
  switch (family) {
    case "new-api":
      return {
        ...common,
        version: "v0.9.7",
        system_name: "New API",
        quota_display_type: "USD",
        custom_currency_symbol: "¤",
        custom_currency_exchange_rate: 1,
        usd_exchange_rate: 7.3,
        price: 7.3,
        enable_data_export: true,
        data_export_default_time: "hour",
        setup: true,
        checkin_enabled: false,
        self_use_mode_enabled: false,
        ...extra,
      };
    case "new-api-legacy":
      return {
        ...common,
        version: "v0.6.6",
        system_name: "New API",
        price: 7.3,
        enable_data_export: true,
        data_export_default_time: "hour",
        setup: true,
        self_use_mode_enabled: false,
        ...extra,
      };
    case "veloera":
      return {
        ...common,
        version: "v0.3.25",
        system_name: "Veloera",
        price: 7.3,
        min_topup: 1,
        enable_data_export: true,
        data_export_default_time: "hour",
        enable_online_topup: false,
        setup: true,
        check_in_enabled: false,
        ...extra,
      };
    case "one-api":
      return {
        ...common,
        version: "v0.6.11-alpha.22",
        system_name: "One API",
        top_up_link: "",
        oidc: false,
        oidc_well_known: "",
        lark_client_id: "",
        ...extra,
      };
    case "one-hub":
      return {
        ...common,
        version: "v0.14.27",
        system_name: "One Hub",
        PaymentUSDRate: 7.3,
        PaymentMinAmount: 1,
        UserInvoiceMonth: false,
        ...extra,
      };
    case "done-hub":
      return {
        ...common,
        version: "v1.23.18",
        system_name: "Done Hub",
        PaymentUSDRate: 7.3,
        UserInvoiceMonth: false,
        linuxDo_oauth: false,
        max_log_query_days: 180,
        ...extra,
      };
  }
}

type Query = URLSearchParams;
const int = (q: Query, name: string): number | undefined => {
  const v = q.get(name);
  return v !== null && /^-?\d+$/.test(v) ? Number(v) : undefined;
};

/**
 * The first index of a time-ordered log whose entry is at or after `at` (binary search), or null
 * when the log is not in time order (entries were written late).
 */
const ordered = new WeakMap<StandInLog[], { length: number; last: number; sorted: boolean }>();
function inTimeOrder(logs: StandInLog[]): boolean {
  const known = ordered.get(logs);
  const last = logs.at(-1)?.createdAt ?? 0;
  if (known && known.length === logs.length && known.last === last) return known.sorted;
  let sorted = true;
  for (let i = 1; i < logs.length && sorted; i++)
    sorted = (logs[i - 1] as StandInLog).createdAt <= (logs[i] as StandInLog).createdAt;
  ordered.set(logs, { length: logs.length, last, sorted });
  return sorted;
}
function lowerBound(logs: StandInLog[], at: number): number {
  let lo = 0;
  let hi = logs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((logs[mid] as StandInLog).createdAt < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Matching log rows, newest first: an array, or a window on a time-ordered log. */
type Rows = { length: number; slice(start: number, end: number): StandInLog[] };

/**
 * The rows of a user's log that match the query's filters, newest first by id as the sites order
 * them: the array's order is the id order, so an entry pushed late for a past second comes first.
 */
function filterLogs(logs: StandInLog[], q: Query, typeParam: string, like: boolean): Rows {
  const type = int(q, typeParam) ?? 0;
  const start = int(q, "start_timestamp") ?? 0;
  const end = int(q, "end_timestamp") ?? 0;
  const model = q.get("model_name") ?? "";
  const token = q.get("token_name") ?? "";
  if (inTimeOrder(logs)) {
    // A log in time order is cut to the range by binary search, and a page is cut from the range
    // without copying it (the benchmarks' million entries).
    const lo = start === 0 ? 0 : lowerBound(logs, start);
    const hi = end === 0 ? logs.length : lowerBound(logs, end + 1);
    if (type === 0 && model === "" && token === "") {
      return {
        length: Math.max(0, hi - lo),
        slice: (a, b) => logs.slice(Math.max(lo, hi - b), Math.max(lo, hi - a)).reverse(),
      };
    }
    logs = logs.slice(lo, hi);
  }
  return logs
    .filter(
      (l) =>
        (type === 0 || l.type === type) &&
        (start === 0 || l.createdAt >= start) &&
        (end === 0 || l.createdAt <= end) &&
        (model === "" || (like ? l.model.includes(model) : l.model === model)) &&
        (token === "" || l.tokenName === token),
    )
    .reverse();
}

/** new-api's `GetPageQuery`: 1-based `p`; `page_size`, `ps` or `size`, 10 by default, capped at 100. */
function newApiPaging(q: Query): { p: number; size: number } {
  return {
    p: Math.max(int(q, "p") ?? 1, 1),
    size: Math.min(int(q, "page_size") ?? int(q, "ps") ?? int(q, "size") ?? 10, 100),
  };
}

/** one-hub's paging: `page` (1-based) and `size`; over 100 is refused. null once the refusal is answered. */
function hubPaging(q: Query, res: ServerResponse): { page: number; size: number } | null {
  const page = Math.max(int(q, "page") ?? 1, 1);
  let size = int(q, "size") ?? 10;
  if (size < 1) size = 10;
  if (size > 100) {
    send(res, 200, { success: false, message: "size 参数不能超过 100" });
    return null;
  }
  return { page, size };
}

/** The fields every family's log row has, under the same names. */
function logFields(l: StandInLog, userId: unknown, username: unknown) {
  return {
    user_id: userId,
    created_at: l.createdAt,
    type: l.type,
    content: l.content,
    username,
    token_name: l.tokenName,
    model_name: l.model,
    quota: l.quota,
    prompt_tokens: l.promptTokens,
    completion_tokens: l.completionTokens,
  };
}

function newApiLogRow(l: StandInLog, id: number, userId: unknown, username: unknown, withIp: boolean) {
  return {
    id,
    ...logFields(l, userId, username),
    use_time: Math.round(l.durationMs / 1000),
    is_stream: l.stream,
    channel: l.type === 2 ? 3 : 0,
    channel_name: "",
    token_id: l.tokenId,
    group: l.group ?? "default",
    ...(withIp ? { ip: "", request_id: `2026${String(l.createdAt)}${String(id).padStart(8, "0")}` } : {}),
    other:
      l.type === 2 ? JSON.stringify({ model_ratio: 0.075, group_ratio: 1, completion_ratio: 4, frt: 612 }) : "null",
  };
}

function hubLogRow(l: StandInLog, userId: unknown, username: unknown, doneHub: boolean) {
  return {
    id: 0,
    ...logFields(l, userId, username),
    ...(doneHub ? { cost_quota: 0 } : {}),
    channel_id: doneHub ? 0 : 3,
    request_time: l.durationMs,
    is_stream: l.stream,
    source_ip: "",
    ...(doneHub ? { request_id: "", upstream_request_id: "" } : {}),
    metadata:
      l.type === 2
        ? { group_name: "default", group_ratio: 1, input_ratio: 0.075, output_ratio: 0.3, price_type: "tokens" }
        : null,
    channel: null,
  };
}

function logsAnswer(family: StandInFamily, user: GatewayUser, q: Query, res: ServerResponse): void {
  const logs = user.logs ?? [];
  const { id: userId, username } = user.data;
  switch (family) {
    case "new-api": {
      const { p, size } = newApiPaging(q);
      const rows = filterLogs(logs, q, "type", false);
      const start = (p - 1) * size;
      const items = rows
        .slice(start, start + size)
        .map((l, i) => newApiLogRow(l, start + i + 1, userId, username, true));
      return ok(res, { page: p, page_size: size, total: rows.length, items });
    }
    case "new-api-legacy":
    case "veloera": {
      const p = Math.max(int(q, "p") ?? 1, 1);
      let size = int(q, "page_size") ?? 0;
      if (size < 0) size = 10;
      size = Math.min(size, 100);
      const rows = filterLogs(logs, q, "type", family === "veloera");
      const start = (p - 1) * size;
      // A missing or zero page_size is `LIMIT 0`: an empty page.
      const items = rows
        .slice(start, start + size)
        .map((l, i) => newApiLogRow(l, (rows.length - start - i) % 1024, userId, username, family !== "veloera"));
      return ok(res, { items, total: rows.length, page: p, page_size: size });
    }
    case "one-api": {
      const p = Math.max(int(q, "p") ?? 0, 0);
      const rows = filterLogs(logs, q, "type", false).slice(p * 10, p * 10 + 10);
      return ok(
        res,
        rows.map((l) => ({
          id: 0,
          ...logFields(l, userId, username),
          channel: l.type === 2 ? 1 : 0,
          request_id: "",
          elapsed_time: l.durationMs,
          is_stream: l.stream,
          system_prompt_reset: false,
        })),
      );
    }
    case "one-hub":
    case "done-hub": {
      const paging = hubPaging(q, res);
      if (!paging) return;
      const { page, size } = paging;
      if (family === "done-hub") {
        const now = Math.floor(Date.now() / 1000);
        const start = int(q, "start_timestamp") ?? 0;
        const end = int(q, "end_timestamp") ?? 0;
        if ((start !== 0 && start < now - 180 * 86_400) || (end !== 0 && end < now - 180 * 86_400)) {
          return send(res, 200, { success: false, message: "开始时间不能早于 180 天前" });
        }
      }
      const rows = filterLogs(logs, q, "log_type", false);
      const data = rows
        .slice((page - 1) * size, page * size)
        .map((l) => hubLogRow(l, userId, username, family === "done-hub"));
      return ok(res, { data, page, size, total_count: rows.length });
    }
  }
}

function statAnswer(family: StandInFamily, user: GatewayUser, q: Query, res: ServerResponse): void {
  const consume = new URLSearchParams(q);
  consume.set(family === "one-hub" || family === "done-hub" ? "log_type" : "type", "2");
  const rows = filterLogs(
    user.logs ?? [],
    consume,
    family === "one-hub" || family === "done-hub" ? "log_type" : "type",
    false,
  );
  const quota = rows.slice(0, rows.length).reduce((sum, l) => sum + l.quota, 0);
  if (family === "new-api" || family === "new-api-legacy" || family === "veloera") {
    const recent = (user.logs ?? []).filter((l) => l.type === 2 && l.createdAt >= Date.now() / 1000 - 60);
    return ok(res, {
      quota,
      rpm: recent.length,
      tpm: recent.reduce((s, l) => s + l.promptTokens + l.completionTokens, 0),
    });
  }
  return ok(res, { quota });
}

function tokenRow(family: StandInFamily, t: StandInToken, userId: unknown) {
  const base = {
    id: t.id,
    user_id: userId,
    key: family === "new-api" ? naMask(t.key) : t.key,
    status: t.status,
    name: t.name,
    created_time: t.createdTime,
    accessed_time: t.accessedTime,
    expired_time: t.expiredTime,
    remain_quota: t.remainQuota,
    unlimited_quota: t.unlimited,
  };
  switch (family) {
    case "one-api":
      return { ...base, used_quota: t.usedQuota, models: "", subnet: "" };
    case "one-hub":
    case "done-hub":
      return {
        ...base,
        used_quota: t.usedQuota,
        group: t.group,
        backup_group: "",
        setting: {
          heartbeat: { enabled: false, timeout_seconds: 0 },
          limits: {
            limit_model_setting: { enabled: false, models: null },
            limits_ip_setting: { enabled: false, whitelist: null },
          },
        },
      };
    default:
      return {
        ...base,
        model_limits_enabled: false,
        model_limits: "",
        allow_ips: "",
        used_quota: t.usedQuota,
        group: t.group,
        ...(family === "new-api" ? { cross_group_retry: false } : {}),
        DeletedAt: null,
      };
  }
}

function tokensAnswer(family: StandInFamily, user: GatewayUser, q: Query, res: ServerResponse): void {
  const tokens = [...(user.tokens ?? [])].sort((a, b) => b.id - a.id);
  const rows = (start: number, size: number) =>
    tokens.slice(start, start + size).map((t) => tokenRow(family, t, user.data.id));
  switch (family) {
    case "new-api": {
      const { p, size } = newApiPaging(q);
      return ok(res, { page: p, page_size: size, total: tokens.length, items: rows((p - 1) * size, size) });
    }
    case "new-api-legacy":
    case "veloera": {
      const p = Math.max(int(q, "p") ?? 0, 0);
      let size = int(q, "size") ?? 10;
      if (size <= 0) size = 10;
      size = Math.min(size, 100);
      return ok(res, rows(p * size, size));
    }
    case "one-api": {
      const p = Math.max(int(q, "p") ?? 0, 0);
      return ok(res, rows(p * 10, 10));
    }
    case "one-hub":
    case "done-hub": {
      const paging = hubPaging(q, res);
      if (!paging) return;
      const { page, size } = paging;
      return ok(res, { data: rows((page - 1) * size, size), page, size, total_count: tokens.length });
    }
  }
}

function topupsAnswer(user: GatewayUser, q: Query, res: ServerResponse): void {
  const { p, size } = newApiPaging(q);
  const since = Math.floor(Date.now() / 1000) - THIRTY_DAYS;
  const rows = (user.topups ?? []).filter((t) => t.createTime >= since).sort((a, b) => b.id - a.id);
  const items = rows.slice((p - 1) * size, p * size).map((t) => ({
    id: t.id,
    user_id: user.data.id,
    amount: t.amount,
    money: t.money,
    trade_no: t.tradeNo,
    payment_method: t.paymentMethod,
    payment_provider: t.paymentMethod === "stripe" ? "stripe" : "epay",
    create_time: t.createTime,
    complete_time: t.completeTime,
    status: t.status,
  }));
  return ok(res, { page: p, page_size: size, total: rows.length, items });
}

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
        return ok(res, user.data);
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
