"use client";

import type { RouterOutputs } from "@/src/trpc/answers";
import { logTypeName } from "@/src/shared/log-types";
import { formatNumber, formatDuration, formatLocal } from "./format";

type Page = Extract<RouterOutputs["account"]["logs"], { success: true }>["data"];
export type LogEntry = Page["items"][number];

/** The site's own names of an entry's extra fields, as people read them. */
const DETAIL_LABELS: Record<string, string> = {
  group: "分组",
  group_name: "分组",
  request_id: "请求 ID",
  model_ratio: "模型倍率",
  completion_ratio: "补全倍率",
  group_ratio: "分组倍率",
  user_group_ratio: "用户分组倍率",
  input_ratio: "输入倍率",
  output_ratio: "输出倍率",
  cache_ratio: "缓存倍率",
  cache_tokens: "缓存 tokens",
  cache_creation_tokens: "缓存写入 tokens",
  cache_creation_ratio: "缓存写入倍率",
  model_price: "按次价格",
  price_type: "计费方式",
  frt: "首字用时",
  first_response: "首字用时",
  reasoning_effort: "推理强度",
  upstream_model_name: "上游模型",
  is_model_mapped: "模型已映射",
};
/** Fields whose value is milliseconds. */
const MILLISECONDS = new Set(["frt", "first_response"]);

function detailValue(key: string, value: string | number | boolean): string | null {
  if (typeof value === "boolean") return value ? "是" : "否";
  // new-api writes -1 for "not set" (no per-call price, no user group ratio, no first-token time).
  if (typeof value === "number" && value < 0 && key !== "quota") return null;
  if (typeof value === "number" && MILLISECONDS.has(key)) return formatDuration(value);
  if (typeof value === "number") return String(value);
  if (key === "price_type") return value === "tokens" ? "按 tokens" : value === "times" ? "按次" : value;
  return value;
}

/** What the site added to an entry (ratios, group, request id), named as people read them. */
export function detailRows(detail: Record<string, string | number | boolean>) {
  return Object.entries(detail)
    .map(([key, value]) => ({ key, label: DETAIL_LABELS[key] ?? key, value: detailValue(key, value) }))
    .filter((e): e is { key: string; label: string; value: string } => e.value !== null);
}

/** Everything a log entry holds: its columns, its text and what the site added (ratios, group, request id). */
export function LogDetail({ item, money }: { item: LogEntry; money: (quota: number) => string }) {
  const extra = detailRows(item.detail);
  return (
    <dl className="log-detail">
      <div>
        <dt>时间</dt>
        <dd>{formatLocal(item.createdAt)}</dd>
      </div>
      <div>
        <dt>类型</dt>
        <dd>{logTypeName(item.type)}</dd>
      </div>
      <div>
        <dt>模型</dt>
        <dd>{item.model || "—"}</dd>
      </div>
      <div>
        <dt>令牌</dt>
        <dd>{item.tokenName || "—"}</dd>
      </div>
      <div>
        <dt>输入 tokens</dt>
        <dd>{formatNumber(item.promptTokens)}</dd>
      </div>
      <div>
        <dt>输出 tokens</dt>
        <dd>{formatNumber(item.completionTokens)}</dd>
      </div>
      <div>
        <dt>花费</dt>
        <dd>
          {money(item.quota)} <span className="muted">（额度 {formatNumber(item.quota)}）</span>
        </dd>
      </div>
      <div>
        <dt>用时</dt>
        <dd>
          {formatDuration(item.durationMs)}
          {item.stream ? "（流式）" : ""}
        </dd>
      </div>
      {item.check && (
        <div className="wide">
          <dt>核对</dt>
          <dd className={item.check.expected !== null && !item.check.ok ? "error-text" : undefined}>
            {item.check.expected === null
              ? item.check.reason
              : item.check.ok
                ? `按这条记录的 tokens 与倍率复算为 ${money(item.check.expected)}（额度 ${formatNumber(item.check.expected)}），与站点扣的相符`
                : `按这条记录的 tokens 与倍率复算应为 ${money(item.check.expected)}（额度 ${formatNumber(item.check.expected)}），站点扣了 ${money(item.quota)}，${item.quota > item.check.expected ? "多扣" : "少扣"} ${money(Math.abs(item.quota - item.check.expected))}`}
          </dd>
        </div>
      )}
      {extra.map(({ key, label, value }) => (
        <div key={key}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
      <div className="wide">
        <dt>内容</dt>
        <dd>{item.content || "—"}</dd>
      </div>
    </dl>
  );
}
