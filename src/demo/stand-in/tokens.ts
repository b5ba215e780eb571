/** Tokens and top-ups per family (gateway-user-api.md §3.7–§3.8). */
import type { ServerResponse } from "node:http";
import { hubPaging, int, naMask, newApiPaging, ok, type Query } from "./answer";
import type { GatewayUser, StandInFamily, StandInToken } from "./types";

const THIRTY_DAYS = 30 * 86_400;

export function tokenRow(family: StandInFamily, t: StandInToken, userId: unknown) {
  const models = t.limits?.models ?? [];
  const ips = t.limits?.ips ?? [];
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
      return { ...base, used_quota: t.usedQuota, models: models.join(","), subnet: ips.join(",") };
    case "one-hub":
    case "done-hub":
      return {
        ...base,
        used_quota: t.usedQuota,
        group: t.group,
        backup_group: t.backupGroup ?? "",
        setting: {
          heartbeat: { enabled: false, timeout_seconds: 0 },
          limits: {
            limit_model_setting: { enabled: models.length > 0, models: models.length > 0 ? models : null },
            limits_ip_setting: { enabled: ips.length > 0, whitelist: ips.length > 0 ? ips : null },
          },
        },
      };
    default:
      return {
        ...base,
        model_limits_enabled: models.length > 0,
        model_limits: models.join(","),
        allow_ips: ips.join("\n"),
        used_quota: t.usedQuota,
        group: t.group,
        ...(family === "new-api" ? { cross_group_retry: t.crossGroupRetry === true } : {}),
        DeletedAt: null,
      };
  }
}

export function tokensAnswer(family: StandInFamily, user: GatewayUser, q: Query, res: ServerResponse): void {
  const tokens = (user.tokens ?? []).filter((t) => !t.deleted).sort((a, b) => b.id - a.id);
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

export function topupsAnswer(user: GatewayUser, q: Query, res: ServerResponse): void {
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
