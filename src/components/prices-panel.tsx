"use client";

import dynamic from "next/dynamic";
import { useMemo, useState } from "react";
import { usePageAccountHref } from "@/src/trpc/page-account";
import { trpc } from "@/src/trpc/react";
import type { RouterOutputs } from "@/src/trpc/answers";
import { formatUsd } from "@/src/shared/money";
import { Empty, Failed, Loading, TableWrap, useAnswer } from "./site-data";
import { RangePicker } from "./range-picker";
import { useQueryState } from "./pager";
import { day, PRESETS, zone, type Range } from "./usage-range";

/** A model's price history: the chart library loads only when one is opened. */
const PriceHistory = dynamic(() => import("./price-history"), {
  ssr: false,
  loading: () => (
    <p className="state" role="status">
      正在载入价格历史…
    </p>
  ),
});

type Table = RouterOutputs["prices"]["table"]["data"];
type Cell = Table["models"][number]["cells"][number];

/** The vendor a model name belongs to, by its usual prefix. */
const VENDORS: Array<[string, RegExp]> = [
  ["OpenAI", /^(gpt|o\d|chatgpt|dall-e|text-embedding|whisper|tts)/i],
  ["Anthropic", /^claude/i],
  ["Google", /^(gemini|gemma)/i],
  ["DeepSeek", /^deepseek/i],
  ["阿里通义", /^(qwen|qwq)/i],
  ["智谱", /^(glm|chatglm)/i],
  ["Moonshot", /^(moonshot|kimi)/i],
  ["xAI", /^grok/i],
  ["Meta", /^llama/i],
  ["Mistral", /^(mistral|mixtral|codestral)/i],
];
const vendorOf = (model: string) => VENDORS.find(([, re]) => re.test(model))?.[0] ?? "其他";

/** A price: "$in / $out" per 1M tokens, or "$x / 次". */
function priceText(c: {
  inputPerMillionUsd: number | null;
  outputPerMillionUsd: number | null;
  perCallUsd: number | null;
}): string {
  if (c.perCallUsd !== null) return `${formatUsd(c.perCallUsd)} / 次`;
  if (c.inputPerMillionUsd === null) return "—";
  const out = c.outputPerMillionUsd === null ? "" : ` / ${formatUsd(c.outputPerMillionUsd)}`;
  return `${formatUsd(c.inputPerMillionUsd)}${out}`;
}

/** Cheaper by more than rounding: the saving is real. */
const cheaper = (usd: number, actual: number) => usd < actual * 0.995;

function PriceCell({ cell }: { cell: Cell }) {
  if (!cell) return <span className="muted">—</span>;
  // 核对 found this account charged above the list: what it is charged first, the list beside it.
  const charged = cell.effective.basis === "charged" && cell.charged && cell.charged.factor !== 1;
  const notes = [
    cell.cheapest ? "实际最便宜" : null,
    cell.usable ? null : "该账户不可用",
    cell.derivedFromLogs ? "由日志推算" : null,
    cell.overList && cell.charged ? `核对：实际计费为价目表的 ${cell.charged.factor.toFixed(2)} 倍` : null,
    charged ? `价目表 ${priceText(cell)}` : null,
    cell.groupRatio !== null && cell.groupRatio !== 1 ? `分组倍率 ${cell.groupRatio}` : null,
  ].filter(Boolean);
  return (
    <span
      className={`price${cell.cheapest ? " cheapest" : ""}${cell.usable ? "" : " unusable"}${cell.overList ? " over-list" : ""}`}
    >
      {priceText(charged ? cell.effective : cell)}
      {notes.length > 0 && <span className="price-note">{notes.join(" · ")}</span>}
    </span>
  );
}

/** 模型价格: every model across the person's accounts, the price for each account's own group. */
export function PricesPanel() {
  const query = trpc.prices.table.useQuery();
  const csv = usePageAccountHref("/api/prices/table.csv");
  const table = useAnswer(query);
  const [search, setSearch] = useQueryState("find", "");
  const [vendor, setVendor] = useQueryState("vendor", "");
  const [picked, setPicked] = useState<string | null>(null);
  const data = table.data;
  const vendors = useMemo(() => [...new Set((data?.models ?? []).map((m) => vendorOf(m.model)))].sort(), [data]);
  const shown = (data?.models ?? []).filter(
    (m) => m.model.toLowerCase().includes(search.trim().toLowerCase()) && (!vendor || vendorOf(m.model) === vendor),
  );
  return (
    <>
      <ThisAccount />
      <section className="card" aria-labelledby="prices-title">
        <h2 id="prices-title">模型价格</h2>
        <p className="muted">
          每百万输入 / 输出 tokens
          的美元价格（按次计费的为每次），已按各账户所在分组的倍率计算；用过的模型按核对得出的实际计费（近 30
          天的消费记录与价目表对比，高于价目表的注明倍数），没用过的按价目表（估计）。绿色为可用账户中实际最便宜的，
          灰色为该账户不可用。站点不公开价格时，由该账户近 7
          天的消费日志推算。价格表每小时读取一次，账户的可用模型每天一次，分组随每次同步更新。
        </p>
        <p>
          <a className="button secondary" href={csv} download>
            下载价格对比 CSV
          </a>
        </p>
        <div className="filters">
          <label className="field">
            <span>搜索模型</span>
            <input value={search} onChange={(e) => setSearch(e.target.value)} placeholder="如 claude、gpt-4o" />
          </label>
          <label className="field">
            <span>厂商</span>
            <select value={vendor} onChange={(e) => setVendor(e.target.value)}>
              <option value="">全部</option>
              {vendors.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </label>
        </div>
        {table.loading ? (
          <Loading label="价格" />
        ) : !data ? (
          <Failed message={table.message ?? ""} onRetry={() => void query.refetch()} />
        ) : data.models.length === 0 ? (
          <Empty>还没有读到任何模型的价格。</Empty>
        ) : (
          <>
            {data.accounts.some((a) => a.error) && (
              <ul className="failed-text">
                {data.accounts
                  .filter((a) => a.error)
                  .map((a) => (
                    <li key={a.accountId}>
                      {a.siteName} · {a.name}：{a.error}
                    </li>
                  ))}
              </ul>
            )}
            <TableWrap label="各账户的模型价格">
              <table className="table price-table wide-only">
                <thead>
                  <tr>
                    <th scope="col">模型</th>
                    {data.accounts.map((a) => (
                      <th scope="col" key={a.accountId}>
                        {a.siteName}
                        <span className="price-note">
                          {a.name}
                          {a.group ? ` · ${a.group}` : ""}
                        </span>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {shown.map((m) => (
                    <tr key={m.model}>
                      <th scope="row">
                        <button
                          type="button"
                          className="link"
                          aria-pressed={picked === m.model}
                          onClick={() => setPicked(picked === m.model ? null : m.model)}
                        >
                          {m.model}
                        </button>
                        <span className="price-note">{vendorOf(m.model)} · 点击看价格历史</span>
                      </th>
                      {m.cells.map((c, i) => (
                        <td key={data.accounts[i]?.accountId ?? i}>
                          <PriceCell cell={c} />
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            <ul className="price-cards" aria-label="各账户的模型价格（卡片）">
              {shown.map((m) => (
                <li key={m.model} className="price-card">
                  <button
                    type="button"
                    className="link"
                    aria-pressed={picked === m.model}
                    onClick={() => setPicked(picked === m.model ? null : m.model)}
                  >
                    <strong>{m.model}</strong>
                  </button>{" "}
                  <span className="muted">{vendorOf(m.model)}</span>
                  <dl>
                    {m.cells.map((c, i) =>
                      c ? (
                        <div key={data.accounts[i]?.accountId ?? i} className="row">
                          <dt>
                            {data.accounts[i]?.siteName} · {data.accounts[i]?.name}
                          </dt>
                          <dd>
                            <PriceCell cell={c} />
                          </dd>
                        </div>
                      ) : null,
                    )}
                  </dl>
                </li>
              ))}
            </ul>
            {shown.length === 0 && <Empty>没有符合条件的模型。</Empty>}
          </>
        )}
      </section>
      {picked && <PriceHistory model={picked} />}
      <WhatIf />
    </>
  );
}

/** 如果在别处: a range's usage per model (the last 30 days at first), priced on each account that offers the model. */
function WhatIf() {
  const tz = zone();
  const [preset, setPreset] = useState<string | null>("30d");
  const [range, setRange] = useState<Range>(() => ({ from: day(-29), to: day(0) }));
  const query = trpc.prices.whatif.useQuery({ ...range, tz }, { enabled: range.from <= range.to });
  const answer = useAnswer(query);
  const data = answer.data;
  const label = PRESETS.find((p) => p.key === preset)?.label;
  const period = label ? (preset === "today" || preset?.endsWith("month") ? label : `最近 ${label}`) : "所选日期内";
  return (
    <section className="card" aria-labelledby="whatif-title">
      <h2 id="whatif-title">如果在别处</h2>
      <p className="muted">{period}各模型的实际用量，按其他账户当时的价格要花多少。</p>
      <div className="usage-controls">
        <RangePicker
          preset={preset}
          range={range}
          onPreset={(key) => {
            const next = PRESETS.find((p) => p.key === key);
            if (!next) return;
            setPreset(key);
            setRange(next.range());
          }}
          onRange={(next) => {
            setPreset(null);
            setRange(next);
          }}
        />
      </div>
      {range.from > range.to ? (
        <p className="state failed">结束日不能早于起始日</p>
      ) : answer.loading ? (
        <Loading label="用量" />
      ) : !data ? (
        <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
      ) : data.rows.length === 0 ? (
        <Empty>{period}没有消费记录。</Empty>
      ) : (
        <>
          <p>
            实际花费 <strong>{formatUsd(data.totals.actualUsd)}</strong>
            ；同样的用量（缓存计入）按各账户的实际计费换算，每个模型都用最便宜的账户：
            <strong>{formatUsd(data.totals.cheapestUsd)}</strong>
            {data.totals.savingUsd > 0 ? `，可省 ${formatUsd(data.totals.savingUsd)}` : "，已是最便宜"}。
          </p>
          <TableWrap label="各模型的用量在各账户的价格下">
            <table className="table price-table whatif-table">
              <thead>
                <tr>
                  <th scope="col">模型</th>
                  <th scope="col" className="num">
                    实际花费
                  </th>
                  <th scope="col">在各账户的价格下</th>
                </tr>
              </thead>
              <tbody>
                {data.rows.map((r) => (
                  <tr key={r.model}>
                    <th scope="row">{r.model}</th>
                    <td className="num">{formatUsd(r.actualUsd)}</td>
                    <td>
                      {r.elsewhere.length === 0 ? (
                        <span className="muted">没有其他账户提供</span>
                      ) : (
                        <ul className="elsewhere-list">
                          {r.elsewhere.map((e) => (
                            <li key={e.accountId} className={cheaper(e.usd, r.actualUsd) ? "cheaper" : undefined}>
                              {e.siteName} {formatUsd(e.usd)}
                              {e.derivedFromLogs ? "（由日志推算）" : ""}
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      )}
    </section>
  );
}

/** 本账户: the active account's group, ratio and models, and for each model it used the cheapest other account. */
function ThisAccount() {
  const tz = zone();
  const query = trpc.prices.account.useQuery({ from: day(-29), to: day(0), tz });
  const answer = useAnswer(query);
  const data = answer.data;
  return (
    <section className="card" aria-labelledby="this-account-title">
      <h2 id="this-account-title">当前账户</h2>
      {answer.loading ? (
        <Loading label="当前账户的价格" />
      ) : !data ? (
        <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
      ) : (
        <>
          <p>
            {data.siteName} · 分组 {data.group ?? "未知"}
            {data.groupRatio !== null ? `（倍率 ${data.groupRatio}）` : "（站点未告知倍率，价格由日志推算）"} · 可用模型{" "}
            {data.models.length} 个
          </p>
          {data.error && <p className="failed-text">最近一次读取失败：{data.error}</p>}
          {data.used.length === 0 ? (
            <Empty>最近 30 天没有用过任何模型。</Empty>
          ) : (
            <>
              <TableWrap label="当前账户用过的模型">
                <table className="table price-table whatif-table wide-only">
                  <thead>
                    <tr>
                      <th scope="col">模型</th>
                      <th scope="col">本账户价格</th>
                      <th scope="col" className="num">
                        30 天花费
                      </th>
                      <th scope="col">最便宜的其他账户</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.used.map((u) => (
                      <tr key={u.model}>
                        <th scope="row">{u.model}</th>
                        <td>{u.own ? priceText(u.own) : "—"}</td>
                        <td className="num">{formatUsd(u.actualUsd)}</td>
                        <td>
                          <Cheapest used={u} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <ul className="price-cards" aria-label="当前账户用过的模型（卡片）">
                {data.used.map((u) => (
                  <li key={u.model} className="price-card">
                    <strong>{u.model}</strong>
                    <dl>
                      <div className="row">
                        <dt>本账户价格</dt>
                        <dd>{u.own ? priceText(u.own) : "—"}</dd>
                      </div>
                      <div className="row">
                        <dt>30 天花费</dt>
                        <dd>{formatUsd(u.actualUsd)}</dd>
                      </div>
                    </dl>
                    <p className="price-card-note">
                      最便宜的其他账户：
                      <Cheapest used={u} />
                    </p>
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}

type Used = NonNullable<RouterOutputs["prices"]["account"]["data"]>["used"][number];

/** The cheapest other account for a model this account used, green when it would have cost less. */
function Cheapest({ used: u }: { used: Used }) {
  if (!u.cheapest) return <span className="muted">没有其他账户提供</span>;
  return (
    <span className={u.cheapest.usd !== null && cheaper(u.cheapest.usd, u.actualUsd) ? "cheaper-text" : undefined}>
      {u.cheapest.siteName} {priceText(u.cheapest.price)}
      {u.cheapest.usd !== null ? `，同样用量 ${formatUsd(u.cheapest.usd)}` : ""}
      {u.cheapest.price.derivedFromLogs ? "（由日志推算）" : ""}
    </span>
  );
}
