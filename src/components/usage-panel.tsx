"use client";

/**
 * 用量分析: the usage ledger's analytics for the active account or every account of the browser,
 * charted with recharts. This module (and recharts with it) is loaded only on this tab.
 */
import { useEffect, useMemo, useState } from "react";
import { useRouter, useSearchParams } from "next/navigation";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { trpc } from "@/src/trpc/react";
import { formatLocal, formatNumber, ledgerName } from "./format";
import { Empty, Failed, Stat, useAnswer } from "./site-data";
import { formatCount, formatUsd } from "@/src/shared/money";
import { COLORS, Chart, SumsTable, VOLUME_LINES, tokens, type Row } from "./usage-charts";
import { Exports } from "./usage-exports";
import { ChargeCheck } from "./charge-check";
import { CacheCard } from "./cache-card";
import { IncomeCard } from "./income-card";
import { PlansCard } from "./plans-card";
import { SpeedCard } from "./speed-card";
import { BalanceTip, UnmatchedDot } from "./balance-chart";
import { useHrefWith } from "./pager";
import { PRESETS, zone, type Range } from "./usage-range";
import { balanceSeries, byPeriod, countAxis, dailySeries } from "./usage-series";
import { SyncStatus } from "./usage-sync";
import { RangePicker } from "./range-picker";
import { rangeRefusal } from "@/src/shared/ranges";

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

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DEFAULT_PRESET = "30d";

/**
 * The range and accounts of the URL (`range=7d`, or `from` and `to` for days of one's own, and
 * `accounts=all`), so a reload or a shared link shows the same view; 30 days of the active account
 * when it says nothing.
 */
function useUsageView() {
  const params = useSearchParams();
  const router = useRouter();
  const hrefWith = useHrefWith();
  const from = params.get("from") ?? "";
  const to = params.get("to") ?? "";
  const custom = DAY.test(from) && DAY.test(to);
  const preset = custom
    ? "custom"
    : (PRESETS.find((p) => p.key === params.get("range")) ?? PRESETS.find((p) => p.key === DEFAULT_PRESET)!).key;
  const range: Range = custom ? { from, to } : PRESETS.find((p) => p.key === preset)!.range();
  const accounts: "active" | "all" = params.get("accounts") === "all" ? "all" : "active";
  const go = (changes: Record<string, string | null>) => router.replace(hrefWith(changes), { scroll: false });
  return {
    preset,
    range,
    accounts,
    choosePreset: (key: string) => go({ range: key === DEFAULT_PRESET ? null : key, from: null, to: null }),
    chooseRange: (next: Range) => go({ range: null, from: next.from, to: next.to }),
    chooseAccounts: (a: "active" | "all") => go({ accounts: a === "all" ? "all" : null }),
  };
}

/** Now in the page's zone, to the minute (`2026-11-27 11:43`): periods after it have not come. */
const nowInZone = () => formatLocal(new Date().toISOString()).slice(0, 16);

/**
 * The range's rows that have come, newest first, by the hour or the day, with their total: under a
 * chart, folded.
 */
function PeriodDetails({ unit, sums }: { unit: Unit; sums: { rows: Row[]; totals: Omit<Row, "key"> } }) {
  const now = nowInZone();
  const rows = sums.rows.filter((r) => r.key <= now).reverse();
  return (
    <details className="chart-details">
      <summary>{UNITS[unit].details}</summary>
      <SumsTable rows={rows} label={UNITS[unit].label} total={{ key: "", ...sums.totals }} />
    </details>
  );
}

type Unit = "hour" | "day" | "week" | "month";
/** How a chart's periods are named: its title, its folded table and the table's first column. */
const UNITS: Record<Unit, { title: string; details: string; label: string }> = {
  hour: { title: "每小时", details: "每小时明细", label: "时间" },
  day: { title: "每日", details: "每日明细", label: "日期" },
  week: { title: "每周", details: "每周明细", label: "周（自周一）" },
  month: { title: "每月", details: "每月明细", label: "月份" },
};
/** Ranges longer than this many days may be charted by week or month. */
const PERIODS_FROM_DAYS = 31;

export default function UsagePanel() {
  const tz = useMemo(zone, []);
  const narrow = useNarrow();
  const { preset, range, accounts, choosePreset, chooseRange, chooseAccounts } = useUsageView();
  // One day is charted by the hour; longer ranges by the day.
  const byHour = range.from === range.to;
  const base = { ...range, tz, accounts };
  // A range the service would refuse is said once, here, and nothing is asked.
  const refusal = rangeRefusal(range.from, range.to);
  const ask = { enabled: refusal === null };
  const [period, setPeriod] = useState<"day" | "week" | "month">("day");
  const long = !byHour && (Date.parse(range.to) - Date.parse(range.from)) / 86_400_000 + 1 > PERIODS_FROM_DAYS;
  const unit: Unit = byHour ? "hour" : long ? period : "day";
  const daysQuery = trpc.usage.summary.useQuery({ ...base, groupBy: byHour ? "hour" : "day", split: "model" }, ask);
  const modelsQuery = trpc.usage.summary.useQuery({ ...base, groupBy: "model" }, ask);
  const tokensQuery = trpc.usage.summary.useQuery({ ...base, groupBy: "token" }, ask);
  const balanceQuery = trpc.usage.balance.useQuery(base, ask);
  const days = useAnswer(daysQuery);
  const models = useAnswer(modelsQuery);
  const tokenRows = useAnswer(tokensQuery);
  const balance = useAnswer(balanceQuery);

  // The days summed by week or month where the range is long and that is asked.
  const periods = useMemo(
    () => (days.data ? { ...days.data, rows: byPeriod(days.data.rows, unit === "hour" ? "day" : unit) } : null),
    [days.data, unit],
  );
  const { points: daily, stacked } = useMemo(() => {
    const series = dailySeries(
      periods?.rows ?? [],
      (models.data?.rows ?? []).map((r) => r.key),
      nowInZone(),
    );
    // An hour's label is its time of day (`05:00`), a day's its month and day.
    return byHour ? { ...series, points: series.points.map((p) => ({ ...p, day: String(p.day).slice(6) })) } : series;
  }, [periods, models.data, byHour]);
  const totals = days.data?.totals;
  const balancePoints = useMemo(() => balanceSeries(balance.data?.accounts ?? []), [balance.data]);
  const unmatchedDays = useMemo(
    () =>
      new Set(
        (balance.data?.accounts ?? []).flatMap((a) =>
          a.series.filter((p) => p.unmatchedUsd !== null).map((p) => p.day),
        ),
      ).size,
    [balance.data],
  );

  return (
    <>
      <section className="card" aria-labelledby="usage-title">
        <div className="card-head">
          <h2 id="usage-title">用量分析</h2>
          <span className="muted">来自本服务的账本，时区 {tz}</span>
        </div>
        <div className="usage-controls">
          <RangePicker preset={preset} range={range} onPreset={choosePreset} onRange={chooseRange} />
          <label className="inline">
            账户
            <select value={accounts} onChange={(e) => chooseAccounts(e.target.value === "all" ? "all" : "active")}>
              <option value="active">当前账户</option>
              <option value="all">全部账户</option>
            </select>
          </label>
        </div>
        {refusal && (
          <p className="state failed" role="alert">
            {refusal}：请调整上面的日期
          </p>
        )}
        {totals && (
          <div className="stats">
            <Stat label="消费" value={formatUsd(totals.usd)} note={`${range.from} 至 ${range.to}`} />
            <Stat
              label="请求"
              value={formatCount(totals.requests)}
              note={`消费请求 ${formatNumber(totals.requests)} 次`}
            />
            <Stat label="输入 tokens" value={tokens(totals.promptTokens)} note={formatNumber(totals.promptTokens)} />
            <Stat
              label="输出 tokens"
              value={tokens(totals.completionTokens)}
              note={formatNumber(totals.completionTokens)}
            />
          </div>
        )}
        {!refusal && <Exports range={range} tz={tz} accounts={accounts} />}
        <SyncStatus />
        {days.data && days.data.accounts.length > 1 && (
          <ul className="coverage">
            {days.data.accounts.map((a) => (
              <li key={a.key}>
                {ledgerName(a)}
                {a.alias && <span className="muted">（{a.site?.name ?? "站点已移除"}）</span>}：
                <span className="muted">{a.syncedAt ? `同步于 ${formatLocal(a.syncedAt)}` : "尚未同步"}</span>
              </li>
            ))}
          </ul>
        )}
      </section>

      {!refusal && (
        <>
          <section className="card" aria-labelledby="daily-title">
            <div className="card-head">
              <h2 id="daily-title">{UNITS[unit].title}消费（按模型）</h2>
              {long && (
                <div className="segmented" role="group" aria-label="时间粒度">
                  {(["day", "week", "month"] as const).map((p) => (
                    <button key={p} type="button" aria-pressed={period === p} onClick={() => setPeriod(p)}>
                      {p === "day" ? "按天" : p === "week" ? "按周" : "按月"}
                    </button>
                  ))}
                </div>
              )}
            </div>
            {days.loading ? (
              <p className="state">正在读取账本…</p>
            ) : !days.data ? (
              <Failed message={days.message ?? ""} onRetry={() => void daysQuery.refetch()} />
            ) : days.data.totals.requests === 0 ? (
              <Empty>
                这段时间账本里没有消费记录{days.data.accounts.every((a) => !a.syncedAt) && "（账本尚未同步）"}
              </Empty>
            ) : (
              <>
                <Chart>
                  <BarChart data={daily} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                    <CartesianGrid strokeDasharray="3 3" vertical={false} />
                    <XAxis dataKey="day" tick={{ fontSize: 12 }} />
                    <YAxis tick={{ fontSize: 12 }} tickFormatter={(v: number) => `$${v}`} width={56} />
                    <Tooltip formatter={(v) => formatUsd(Number(v))} />
                    <Legend wrapperStyle={{ fontSize: 12 }} />
                    {stacked.map((m, i) => (
                      <Bar
                        key={m}
                        dataKey={m}
                        stackId="spend"
                        fill={COLORS[i % COLORS.length]}
                        isAnimationActive={false}
                      />
                    ))}
                  </BarChart>
                </Chart>
                <PeriodDetails unit={unit} sums={periods ?? days.data} />
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
                        <Tooltip formatter={(v) => formatUsd(Number(v))} />
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

          <CacheCard range={range} tz={tz} accounts={accounts} />

          <SpeedCard range={range} tz={tz} accounts={accounts} />

          <section className="card" aria-labelledby="volume-title">
            <h2 id="volume-title">请求与 tokens</h2>
            {days.data && days.data.totals.requests > 0 && (
              <>
                <Chart height={240}>
                  <LineChart data={daily} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                    <CartesianGrid strokeDasharray="3 3" vertical={false} />
                    <XAxis dataKey="day" tick={{ fontSize: 12 }} />
                    <YAxis
                      yAxisId="requests"
                      tick={{ fontSize: 12 }}
                      allowDecimals={false}
                      tickFormatter={countAxis(Math.max(0, ...days.data.rows.map((r) => r.requests)))}
                      width={48}
                    />
                    <YAxis
                      yAxisId="tokens"
                      orientation="right"
                      tick={{ fontSize: 12 }}
                      allowDecimals={false}
                      tickFormatter={countAxis(
                        Math.max(0, ...days.data.rows.map((r) => Math.max(r.promptTokens, r.completionTokens))),
                      )}
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
                <PeriodDetails unit={unit} sums={periods ?? days.data} />
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
                      balance.data.accounts.some((a) => a.balanceUsd !== null)
                        ? formatUsd(balance.data.totals.balanceUsd)
                        : "—"
                    }
                    note="最近一次同步时"
                  />
                  <Stat label="日均消费" value={formatUsd(balance.data.totals.burnRateUsd)} note="最近 7 天" />
                  <Stat
                    label="预计可用"
                    value={balance.data.totals.daysLeft === null ? "—" : `${balance.data.totals.daysLeft} 天`}
                    note="按日均消费"
                  />
                </div>
                {balancePoints.length === 0 ? (
                  <Empty>这段时间没有余额记录（每次同步时记录一次）</Empty>
                ) : (
                  <>
                    <p className="muted">
                      每次同步时记录站点报告的余额，图中为每天最后一次。
                      {unmatchedDays > 0 &&
                        `红色圆点：余额变化与日志不符的日子（${unmatchedDays} 天），可下载下方的对账 CSV 查看每天的明细。`}
                    </p>
                    <Chart height={220}>
                      <LineChart data={balancePoints} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                        <CartesianGrid strokeDasharray="3 3" vertical={false} />
                        <XAxis dataKey="day" tick={{ fontSize: 12 }} />
                        <YAxis tick={{ fontSize: 12 }} tickFormatter={(v: number) => `$${v}`} width={56} />
                        <Tooltip content={<BalanceTip />} />
                        <Legend wrapperStyle={{ fontSize: 12 }} />
                        {balance.data.accounts.map((a, i) => (
                          <Line
                            key={a.key}
                            dataKey={`a${i}`}
                            name={ledgerName(a)}
                            stroke={COLORS[i % COLORS.length]}
                            dot={<UnmatchedDot series={i} color={COLORS[i % COLORS.length] ?? "#888"} />}
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

          <IncomeCard range={range} tz={tz} accounts={accounts} />

          <PlansCard range={range} tz={tz} accounts={accounts} />

          <ChargeCheck range={range} tz={tz} accounts={accounts} />
        </>
      )}
    </>
  );
}
