"use client";

/**
 * 用量分析: the usage ledger's analytics for the active account or every account of the browser,
 * charted with recharts. This module (and recharts with it) is loaded only on this tab.
 */
import { useEffect, useMemo, useState } from "react";
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { trpc } from "@/src/trpc/react";
import { errorMessage } from "@/src/trpc/client";
import { formatLocal, formatNumber } from "./format";
import { Empty, Failed, Stat, useAnswer } from "./site-data";

const COLORS = ["#2563eb", "#16a34a", "#f59e0b", "#dc2626", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#9ca3af"];
/** The lines of the requests-and-tokens chart: requests on the left axis, tokens on the right. */
const VOLUME_LINES = [
  { key: "requests", name: "请求", axis: "requests" },
  { key: "promptTokens", name: "提示 tokens", axis: "tokens" },
  { key: "completionTokens", name: "补全 tokens", axis: "tokens" },
] as const;
/** Models past this many are summed as 其他 in the daily chart. */
const TOP_MODELS = 8;

const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The calendar day (YYYY-MM-DD) in the browser's zone, `offset` days from today. */
function day(offset = 0, base = new Date()): string {
  const d = new Date(base.getFullYear(), base.getMonth(), base.getDate() + offset);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

type Range = { from: string; to: string };

const PRESETS: Array<{ key: string; label: string; range: () => Range }> = [
  { key: "today", label: "今天", range: () => ({ from: day(), to: day() }) },
  { key: "7d", label: "7 天", range: () => ({ from: day(-6), to: day() }) },
  { key: "30d", label: "30 天", range: () => ({ from: day(-29), to: day() }) },
  {
    key: "month",
    label: "本月",
    range: () => {
      const now = new Date();
      return { from: day(0, new Date(now.getFullYear(), now.getMonth(), 1)), to: day() };
    },
  },
  {
    key: "last-month",
    label: "上月",
    range: () => {
      const now = new Date();
      return {
        from: day(0, new Date(now.getFullYear(), now.getMonth() - 1, 1)),
        to: day(0, new Date(now.getFullYear(), now.getMonth(), 0)),
      };
    },
  },
];

const usd = (n: number) =>
  `$${n.toLocaleString("en-US", Math.abs(n) < 1 && n !== 0 ? { maximumFractionDigits: 4 } : { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const tokens = (n: number) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(1)}K` : formatNumber(n);

function Chart({ children, height = 280 }: { children: React.ReactElement; height?: number }) {
  return (
    <div className="chart" style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        {children}
      </ResponsiveContainer>
    </div>
  );
}

type Row = { key: string; requests: number; usd: number; promptTokens: number; completionTokens: number };

/** The table under a chart: one row per group, with totals. */
function SumsTable({ rows, label, total }: { rows: Row[]; label: string; total: Row }) {
  return (
    <div className="table-wrap chart-table">
      <table className="table">
        <thead>
          <tr>
            <th>{label}</th>
            <th className="num">请求</th>
            <th className="num">提示 tokens</th>
            <th className="num">补全 tokens</th>
            <th className="num">消费</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <td>{r.key || "（未命名）"}</td>
              <td className="num">{formatNumber(r.requests)}</td>
              <td className="num">{formatNumber(r.promptTokens)}</td>
              <td className="num">{formatNumber(r.completionTokens)}</td>
              <td className="num">{usd(r.usd)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th>合计</th>
            <th className="num">{formatNumber(total.requests)}</th>
            <th className="num">{formatNumber(total.promptTokens)}</th>
            <th className="num">{formatNumber(total.completionTokens)}</th>
            <th className="num">{usd(total.usd)}</th>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

/** The active account's ledger: how far it is synced, a sync under way with its progress, the last error. */
function SyncStatus() {
  const utils = trpc.useUtils();
  const status = trpc.usage.status.useQuery(undefined, {
    refetchInterval: (q) => (q.state.data?.running ? 1500 : false),
  });
  const sync = trpc.usage.sync.useMutation({
    onSuccess: async () => {
      await utils.usage.status.invalidate();
    },
  });
  const wasRunning = useMemo(() => ({ current: false }), []);
  const running = status.data?.running ?? false;
  useEffect(() => {
    // A sync just ended: the analytics read the ledger again.
    if (wasRunning.current && !running) void utils.usage.summary.invalidate();
    wasRunning.current = running;
  }, [running, utils, wasRunning]);
  if (status.isPending) return <p className="state">正在读取账本状态…</p>;
  if (!status.data) return <Failed message={errorMessage(status.error)} onRetry={() => void status.refetch()} />;
  const s = status.data;
  return (
    <div className="sync" aria-label="账本同步">
      <div className="sync-line">
        <span>
          当前账户的账本：<strong>{formatNumber(s.entries)}</strong> 条
          {s.oldest && s.newest && (
            <span className="muted">
              （{formatLocal(s.oldest).slice(0, 10)} 至 {formatLocal(s.newest).slice(0, 16)}）
            </span>
          )}
        </span>
        <span className="muted">{s.syncedAt ? `上次同步 ${formatLocal(s.syncedAt)}` : "尚未同步"}</span>
        <button
          type="button"
          className="secondary"
          disabled={s.running || sync.isPending}
          onClick={() => sync.mutate()}
        >
          {s.running ? "正在同步…" : "立即同步"}
        </button>
      </div>
      {s.running && (
        <div
          className="progress"
          role="progressbar"
          aria-label="同步进度"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round((s.progress ?? 0) * 100)}
        >
          <span style={{ width: `${Math.round((s.progress ?? 0) * 100)}%` }} />
        </div>
      )}
      {s.lastError && (
        <p className="state failed" role="alert">
          上次同步未完成：{s.lastError}
        </p>
      )}
      {s.skipped.count > 0 && (
        <p className="state">
          已拒收 {s.skipped.count.toLocaleString("zh-CN")} 条超出合理范围的日志
          {s.skipped.reason ? `（${s.skipped.reason}）` : ""}
        </p>
      )}
      {sync.error && <p className="state failed">{errorMessage(sync.error)}</p>}
    </div>
  );
}

/** Downloads of the ledger: the range's CSV (its row count first) and a month's PDF statement. */
function Exports({ range, tz, accounts }: { range: Range; tz: string; accounts: "active" | "all" }) {
  const [month, setMonth] = useState(() => range.to.slice(0, 7));
  const countQuery = trpc.export.count.useQuery({ ...range, tz, accounts });
  const count = useAnswer(countQuery);
  const csv = `/api/export/usage.csv?${new URLSearchParams({ ...range, tz, accounts })}`;
  const pdf = `/api/export/statement.pdf?${new URLSearchParams({ month, tz, accounts })}`;
  return (
    <div className="exports" aria-label="导出">
      <span className="exports-line">
        {count.loading ? (
          <span className="muted">正在统计行数…</span>
        ) : count.data ? (
          <>
            <span>
              所选范围共 <strong>{formatNumber(count.data.rows)}</strong> 行
            </span>
            <a className="button secondary" href={csv} download={count.data.filename}>
              下载 CSV
            </a>
          </>
        ) : (
          <span className="failed-text">{count.message}</span>
        )}
      </span>
      <span className="exports-line">
        <label className="inline">
          月份
          <input
            type="month"
            value={month}
            aria-label="对账单月份"
            onChange={(e) => e.target.value && setMonth(e.target.value)}
          />
        </label>
        <a className="button secondary" href={pdf} download={`statement_${month}.pdf`}>
          下载月度对账单 PDF
        </a>
      </span>
    </div>
  );
}

/** Whether the window is phone-narrow (the category axes get less room). */
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(false);
  useEffect(() => {
    const query = window.matchMedia("(max-width: 560px)");
    setNarrow(query.matches);
    const change = () => setNarrow(query.matches);
    query.addEventListener("change", change);
    return () => query.removeEventListener("change", change);
  }, []);
  return narrow;
}

export default function UsagePanel() {
  const tz = useMemo(zone, []);
  const narrow = useNarrow();
  const [preset, setPreset] = useState("30d");
  const [range, setRange] = useState<Range>(() => PRESETS[2]!.range());
  const [accounts, setAccounts] = useState<"active" | "all">("active");
  const base = { ...range, tz, accounts };
  const daysQuery = trpc.usage.summary.useQuery({ ...base, groupBy: "day", split: "model" });
  const modelsQuery = trpc.usage.summary.useQuery({ ...base, groupBy: "model" });
  const tokensQuery = trpc.usage.summary.useQuery({ ...base, groupBy: "token" });
  const balanceQuery = trpc.usage.balance.useQuery(base);
  const days = useAnswer(daysQuery);
  const models = useAnswer(modelsQuery);
  const tokenRows = useAnswer(tokensQuery);
  const balance = useAnswer(balanceQuery);

  const top = (models.data?.rows ?? []).slice(0, TOP_MODELS).map((r) => r.key);
  const daily = (days.data?.rows ?? []).map((r) => {
    const point: Record<string, number | string> = {
      day: r.key.slice(5),
      requests: r.requests,
      promptTokens: r.promptTokens,
      completionTokens: r.completionTokens,
    };
    let rest = 0;
    for (const [model, spent] of Object.entries(r.split ?? {})) {
      if (top.includes(model)) point[model] = spent;
      else rest += spent;
    }
    if (rest > 0) point["其他"] = Math.round(rest * 1e6) / 1e6;
    return point;
  });
  const stacked = [...top, ...(daily.some((p) => "其他" in p) ? ["其他"] : [])];
  const totals = days.data?.totals;
  const balanceSeries = useMemo(() => {
    const byDay = new Map<string, Record<string, number | string>>();
    for (const [i, a] of (balance.data?.accounts ?? []).entries()) {
      for (const p of a.series) {
        const point = byDay.get(p.day) ?? { day: p.day.slice(5) };
        point[`a${i}`] = p.usd;
        byDay.set(p.day, point);
      }
    }
    return [...byDay.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, p]) => p);
  }, [balance.data]);
  const invalid = range.from > range.to;

  return (
    <>
      <section className="card" aria-labelledby="usage-title">
        <div className="card-head">
          <h2 id="usage-title">用量分析</h2>
          <span className="muted">来自本服务的账本，时区 {tz}</span>
        </div>
        <div className="usage-controls">
          <div className="segmented" role="group" aria-label="时间范围">
            {PRESETS.map((p) => (
              <button
                key={p.key}
                type="button"
                aria-pressed={preset === p.key}
                onClick={() => {
                  setPreset(p.key);
                  setRange(p.range());
                }}
              >
                {p.label}
              </button>
            ))}
          </div>
          {(["from", "to"] as const).map((end) => (
            <label key={end} className="inline">
              {end === "from" ? "从" : "至"}
              <input
                type="date"
                value={range[end]}
                min={end === "to" ? range.from : undefined}
                max={end === "from" ? range.to : undefined}
                aria-label={end === "from" ? "起始日" : "结束日"}
                onChange={(e) => {
                  setPreset("custom");
                  if (e.target.value) setRange({ ...range, [end]: e.target.value });
                }}
              />
            </label>
          ))}
          <label className="inline">
            账户
            <select value={accounts} onChange={(e) => setAccounts(e.target.value === "all" ? "all" : "active")}>
              <option value="active">当前账户</option>
              <option value="all">全部账户</option>
            </select>
          </label>
        </div>
        {invalid && <p className="state failed">结束日不能早于起始日</p>}
        {totals && (
          <div className="stats">
            <Stat label="消费" value={usd(totals.usd)} note={`${range.from} 至 ${range.to}`} />
            <Stat label="请求" value={formatNumber(totals.requests)} note="消费请求数" />
            <Stat label="提示 tokens" value={tokens(totals.promptTokens)} note={formatNumber(totals.promptTokens)} />
            <Stat
              label="补全 tokens"
              value={tokens(totals.completionTokens)}
              note={formatNumber(totals.completionTokens)}
            />
          </div>
        )}
        <Exports range={range} tz={tz} accounts={accounts} />
        <SyncStatus />
        {days.data && days.data.accounts.length > 1 && (
          <ul className="coverage">
            {days.data.accounts.map((a) => (
              <li key={a.key}>
                {a.site?.name ?? "站点已移除"} · {a.username || `用户 ${a.userId}`}：
                <span className="muted">{a.syncedAt ? `同步于 ${formatLocal(a.syncedAt)}` : "尚未同步"}</span>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="card" aria-labelledby="daily-title">
        <h2 id="daily-title">每日消费（按模型）</h2>
        {days.loading ? (
          <p className="state">正在读取账本…</p>
        ) : !days.data ? (
          <Failed message={days.message ?? ""} onRetry={() => void daysQuery.refetch()} />
        ) : days.data.totals.requests === 0 ? (
          <Empty>这段时间账本里没有消费记录{days.data.accounts.every((a) => !a.syncedAt) && "（账本尚未同步）"}</Empty>
        ) : (
          <>
            <Chart>
              <BarChart data={daily} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                <CartesianGrid strokeDasharray="3 3" vertical={false} />
                <XAxis dataKey="day" tick={{ fontSize: 12 }} />
                <YAxis tick={{ fontSize: 12 }} tickFormatter={(v: number) => `$${v}`} width={56} />
                <Tooltip formatter={(v) => usd(Number(v))} />
                <Legend wrapperStyle={{ fontSize: 12 }} />
                {stacked.map((m, i) => (
                  <Bar key={m} dataKey={m} stackId="spend" fill={COLORS[i % COLORS.length]} isAnimationActive={false} />
                ))}
              </BarChart>
            </Chart>
            <details className="chart-details">
              <summary>每日明细</summary>
              <SumsTable rows={[...days.data.rows].reverse()} label="日期" total={{ key: "", ...days.data.totals }} />
            </details>
          </>
        )}
      </section>

      <div className="usage-grid">
        {[
          { id: "models", title: "按模型", label: "模型", answer: models, query: modelsQuery },
          { id: "tokens", title: "按令牌", label: "令牌", answer: tokenRows, query: tokensQuery },
        ].map(({ id, title, label, answer, query }) => (
          <section key={id} className="card" aria-labelledby={`${id}-title`}>
            <h2 id={`${id}-title`}>{title}</h2>
            {answer.loading ? (
              <p className="state">正在读取账本…</p>
            ) : !answer.data ? (
              <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
            ) : answer.data.rows.length === 0 ? (
              <Empty>没有消费记录</Empty>
            ) : (
              <>
                <Chart height={Math.max(160, Math.min(answer.data.rows.length, 10) * 32 + 40)}>
                  <BarChart data={answer.data.rows.slice(0, 10)} layout="vertical" margin={{ left: 8, right: 16 }}>
                    <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                    <XAxis type="number" tick={{ fontSize: 12 }} tickFormatter={(v: number) => `$${v}`} />
                    <YAxis
                      type="category"
                      dataKey="key"
                      width={narrow ? 96 : 170}
                      tick={{ fontSize: narrow ? 10 : 12 }}
                    />
                    <Tooltip formatter={(v) => usd(Number(v))} />
                    <Bar
                      dataKey="usd"
                      name="消费"
                      fill={id === "models" ? COLORS[0] : COLORS[1]}
                      isAnimationActive={false}
                    />
                  </BarChart>
                </Chart>
                <SumsTable rows={answer.data.rows} label={label} total={{ key: "", ...answer.data.totals }} />
              </>
            )}
          </section>
        ))}
      </div>

      <section className="card" aria-labelledby="volume-title">
        <h2 id="volume-title">请求与 tokens</h2>
        {days.data && days.data.totals.requests > 0 && (
          <>
            <Chart height={240}>
              <LineChart data={daily} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                <CartesianGrid strokeDasharray="3 3" vertical={false} />
                <XAxis dataKey="day" tick={{ fontSize: 12 }} />
                <YAxis yAxisId="requests" tick={{ fontSize: 12 }} width={48} />
                <YAxis
                  yAxisId="tokens"
                  orientation="right"
                  tick={{ fontSize: 12 }}
                  tickFormatter={(v: number) => tokens(v)}
                  width={56}
                />
                <Tooltip formatter={(v) => formatNumber(Number(v))} />
                <Legend wrapperStyle={{ fontSize: 12 }} />
                {VOLUME_LINES.map((l, n) => (
                  <Line
                    key={l.key}
                    yAxisId={l.axis}
                    dataKey={l.key}
                    name={l.name}
                    stroke={COLORS[n]}
                    dot={false}
                    isAnimationActive={false}
                  />
                ))}
              </LineChart>
            </Chart>
            <details className="chart-details">
              <summary>每日明细</summary>
              <SumsTable rows={[...days.data.rows].reverse()} label="日期" total={{ key: "", ...days.data.totals }} />
            </details>
          </>
        )}
        {days.data && days.data.totals.requests === 0 && <Empty>没有请求记录</Empty>}
      </section>

      <section className="card" aria-labelledby="balance-title">
        <h2 id="balance-title">余额走势</h2>
        {balance.loading ? (
          <p className="state">正在读取账本…</p>
        ) : !balance.data ? (
          <Failed message={balance.message ?? ""} onRetry={() => void balanceQuery.refetch()} />
        ) : (
          <>
            <div className="stats">
              <Stat
                label="当前余额"
                value={
                  balance.data.accounts.some((a) => a.balanceUsd !== null) ? usd(balance.data.totals.balanceUsd) : "—"
                }
                note="最近一次同步时"
              />
              <Stat label="日均消费" value={usd(balance.data.totals.burnRateUsd)} note="最近 7 天" />
              <Stat
                label="预计可用"
                value={balance.data.totals.daysLeft === null ? "—" : `${balance.data.totals.daysLeft} 天`}
                note="按日均消费"
              />
            </div>
            {balanceSeries.length === 0 ? (
              <Empty>这段时间没有余额记录（每次同步时记录一次）</Empty>
            ) : (
              <>
                <p className="muted">每次同步时记录站点报告的余额，图中为每天最后一次。</p>
                <Chart height={220}>
                  <LineChart data={balanceSeries} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                    <CartesianGrid strokeDasharray="3 3" vertical={false} />
                    <XAxis dataKey="day" tick={{ fontSize: 12 }} />
                    <YAxis tick={{ fontSize: 12 }} tickFormatter={(v: number) => `$${v}`} width={56} />
                    <Tooltip formatter={(v) => usd(Number(v))} />
                    <Legend wrapperStyle={{ fontSize: 12 }} />
                    {balance.data.accounts.map((a, i) => (
                      <Line
                        key={a.key}
                        dataKey={`a${i}`}
                        name={`${a.site?.name ?? "站点已移除"} · ${a.username || a.userId}`}
                        stroke={COLORS[i % COLORS.length]}
                        dot={{ r: 3 }}
                        isAnimationActive={false}
                        connectNulls
                      />
                    ))}
                  </LineChart>
                </Chart>
              </>
            )}
          </>
        )}
      </section>
    </>
  );
}
