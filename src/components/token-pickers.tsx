"use client";

import { useId, useState } from "react";
import type { RouterOutputs } from "@/src/trpc/answers";

export type TokenOptions = Extract<RouterOutputs["tokens"]["options"], { success: true }>["data"];

/** 分组 as a choice among the groups the site offers, each with its ratio (the account's own first). */
export function GroupPicker({
  options,
  value,
  onChange,
}: {
  options: TokenOptions;
  value: string;
  onChange: (group: string) => void;
}) {
  const id = useId();
  const groups = options.groups ?? [];
  const known = value === "" || groups.some((g) => g.name === value);
  return (
    <div className="field">
      <label htmlFor={id}>分组</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">账户自己的分组{options.group ? `（${options.group}）` : ""}</option>
        {groups.map((g) => (
          <option key={g.name} value={g.name}>
            {g.name}（倍率 ×{g.ratio}）
          </option>
        ))}
        {!known && <option value={value}>{value}（站点未列出）</option>}
      </select>
      <span className="hint">倍率越低越便宜；价格 = 模型价格 × 分组倍率。</span>
    </div>
  );
}

/**
 * 限用模型 picked from the account's usable models (a filter over them, a box per model); what is
 * typed in the list above stays, models the site no longer lists included.
 */
export function ModelPicker({
  models,
  chosen,
  onChange,
}: {
  models: string[];
  chosen: string[];
  onChange: (models: string[]) => void;
}) {
  const id = useId();
  const [filter, setFilter] = useState("");
  const shown = models.filter((m) => m.toLowerCase().includes(filter.trim().toLowerCase()));
  const set = new Set(chosen);
  const toggle = (model: string) => onChange(set.has(model) ? chosen.filter((m) => m !== model) : [...chosen, model]);
  return (
    <fieldset className="field model-picker">
      <legend>从账户可用的 {models.length} 个模型中选择</legend>
      <input
        id={id}
        type="search"
        value={filter}
        onChange={(e) => setFilter(e.target.value)}
        placeholder="筛选模型，如 claude"
        aria-label="筛选模型"
      />
      <div className="model-picker-list" role="group" aria-label="可用模型">
        {shown.length === 0 ? (
          <span className="muted">没有匹配的模型</span>
        ) : (
          shown.map((m) => (
            <label key={m} className="check">
              <input type="checkbox" checked={set.has(m)} onChange={() => toggle(m)} /> {m}
            </label>
          ))
        )}
      </div>
    </fieldset>
  );
}
