/** The usage log and its sums per family: filters, paging, row shapes (gateway-user-api.md §3.5–§3.6). */
import type { ServerResponse } from "node:http";
import { hubPaging, int, newApiPaging, ok, send, type Query } from "./answer";
import type { GatewayUser, StandInFamily, StandInLog } from "./types";

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
      l.type === 2
        ? JSON.stringify({
            model_ratio: l.ratios?.model ?? 0.075,
            group_ratio: l.ratios?.group ?? 1,
            completion_ratio: l.ratios?.completion ?? 4,
            ...(l.cache
              ? {
                  cache_tokens: l.cache.read,
                  cache_ratio: l.cache.readRatio,
                  ...(l.cache.write > 0
                    ? { cache_creation_tokens: l.cache.write, cache_creation_ratio: l.cache.writeRatio }
                    : {}),
                }
              : {}),
            ...(l.subscription
              ? {
                  billing_source: "subscription",
                  subscription_id: l.subscription.id,
                  subscription_plan_id: l.subscription.planId,
                  subscription_plan_title: l.subscription.title,
                  subscription_pre_consumed: l.quota,
                  subscription_consumed: l.quota,
                  subscription_total: l.subscription.total,
                  subscription_used: l.subscription.used,
                  subscription_remain: l.subscription.total - l.subscription.used,
                  wallet_quota_deducted: 0,
                }
              : {}),
            frt: 612,
          })
        : "null",
  };
}

/** one-hub's extra-token keys of a call's cache: OpenAI's `cached_tokens`, Claude's read and write. */
function hubCache(cache: StandInLog["cache"]): Record<string, number> {
  if (!cache) return {};
  if (!cache.claude) return { cached_tokens: cache.read, cached_tokens_ratio: cache.readRatio };
  return {
    ...(cache.read > 0 ? { cached_read_tokens: cache.read, cached_read_tokens_ratio: cache.readRatio } : {}),
    ...(cache.write > 0 ? { cached_write_tokens: cache.write, cached_write_tokens_ratio: cache.writeRatio } : {}),
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
        ? {
            group_name: l.group ?? "default",
            group_ratio: l.ratios?.group ?? 1,
            input_ratio: l.ratios?.model ?? 0.075,
            output_ratio: (l.ratios?.model ?? 0.075) * (l.ratios?.completion ?? 4),
            price_type: "tokens",
            ...hubCache(l.cache),
          }
        : null,
    channel: null,
  };
}

export function logsAnswer(family: StandInFamily, user: GatewayUser, q: Query, res: ServerResponse): void {
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

export function statAnswer(family: StandInFamily, user: GatewayUser, q: Query, res: ServerResponse): void {
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
