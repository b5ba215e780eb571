"use client";

/**
 * 核对 in 用量分析: whether each charge of the range is what its own logged ratios make and what
 * the site's published list makes for the group, per account and model, with the entries charged
 * most above either (each opens in place, with its arithmetic) and the flagged entries' CSV.
 */
import { trpc } from "@/src/trpc/react";
import type { RouterOutputs } from "@/src/trpc/answers";
import { usePageAccountHref } from "@/src/trpc/page-account";
import { formatUsd } from "@/src/shared/money";
import { formatLocal, formatNumber } from "./format";
import { detailRows } from "./log-detail";
import { Empty, Failed, Stat, useAnswer } from "./site-data";
import type { Range } from "./usage-range";

type Report = RouterOutputs["usage"]["check"]["data"];
type Flagged = Report["worst"][number];

/** Up to this many account-and-model rows show before 显示全部. */
const ROWS_SHOWN = 12;

const signed = (usd: number) => (usd < 0 ? `少扣 ${formatUsd(-usd)}` : formatUsd(usd));

const n = (v: string | number | boolean | undefined) => (typeof v === "number" ? v : Number(v));

/**
 * The site's own arithmetic with the entry's figures, where its family's formula is plain (no cache,
 * image or audio tokens): one-hub's and done-hub's ceiling of tokens × ratios, new-api's rounding.
 */
function formula(e: Flagged): string | null {
  const d = e.detail;
  const p = formatNumber(e.promptTokens);
  const c = formatNumber(e.completionTokens);
  const extra = Object.keys(d).some((k) => /cache|cached|image|audio|reasoning_tokens|long_context/.test(k));
  if (extra) return null;
  if (d.price_type === "tokens" && d.input_ratio !== undefined) {
    const gr = n(d.group_ratio);
    return `⌈${p} × ${n(d.input_ratio)} × ${gr} + ${c} × ${n(d.output_ratio)} × ${gr}⌉`;
  }
  if (d.model_ratio !== undefined && (d.model_price === undefined || n(d.model_price) < 0)) {
    return `(${p} + ${c} × ${n(d.completion_ratio)}) × ${n(d.model_ratio)} × ${n(d.group_ratio)}，四舍五入`;
  }
  return null;
}

/** The charge of an entry worked out both ways, in words. */
function Arithmetic({ e }: { e: Flagged }) {
  return (
    <div className="check-entry">
      <p>
        实际扣费 <strong>{formatUsd(e.chargedUsd)}</strong>（额度 {formatNumber(e.quota)}），输入{" "}
        {formatNumber(e.promptTokens)} tokens，输出 {formatNumber(e.completionTokens)} tokens
        {e.tokenName && `，令牌 ${e.tokenName}`}。
      </p>
      {formula(e) && (
        <p>
          站点的算法：{formula(e)}
          {e.expected === null ? "，按这条日志记录的倍率算与实际扣费相符。" : ` = ${formatNumber(e.expected)} 额度。`}
        </p>
      )}
      {e.expected !== null && (
        <p className="error-text">
          按这条日志自己记录的 tokens 与倍率复算应为 {formatUsd(e.expectedUsd ?? 0)}（额度 {formatNumber(e.expected)}
          ），与实际扣费不符。
        </p>
      )}
      {e.listExpected !== null && (
        <p className="error-text">
          {e.note}；按价目表应为 {formatUsd(e.listExpectedUsd ?? 0)}（额度 {formatNumber(e.listExpected)}）。
        </p>
      )}
      <dl className="log-detail">
        {detailRows(e.detail).map(({ key, label, value }) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

function Rows({ rows }: { rows: Report["rows"] }) {
  return (
    <div className="table-wrap chart-table" role="region" aria-label="核对明细表格" tabIndex={0}>
      <table className="table">
        <thead>
          <tr>
            <th>账户</th>
            <th>模型</th>
            <th className="num">条数</th>
            <th className="num">实际扣费</th>
            <th className="num">按日志倍率应扣</th>
            <th className="num">按价目表应扣</th>
            <th className="num">不符（倍率/价目表）</th>
            <th className="num">多扣</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.key} ${r.model}`} className={r.differs + r.listDiffers > 0 ? "flagged" : undefined}>
              <td>
                {r.account} <span className="muted">{r.site}</span>
              </td>
              <td>{r.model || "（未命名）"}</td>
              <td className="num">{formatNumber(r.entries)}</td>
              <td className="num">{formatUsd(r.chargedUsd)}</td>
              <td className="num">
                {r.checked === 0 ? "无法复算" : formatUsd(r.expectedUsd)}
                {r.checked > 0 && r.checked < r.entries && <span className="muted">（{r.checked} 条）</span>}
              </td>
              <td className="num">{r.listChecked === 0 ? "无法比对" : formatUsd(r.listExpectedUsd)}</td>
              <td className="num">
                {r.differs} / {r.listDiffers}
              </td>
              <td className="num">{r.overUsd === 0 ? "—" : signed(r.overUsd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ChargeCheck({ range, tz, accounts }: { range: Range; tz: string; accounts: "active" | "all" }) {
  const query = trpc.usage.check.useQuery({ ...range, tz, accounts });
  const answer = useAnswer(query);
  const csv = usePageAccountHref(`/api/export/charge-check.csv?${new URLSearchParams({ ...range, tz, accounts })}`);
  const report = answer.data;
  const flagged = report ? report.totals.differs + report.totals.listDiffers : 0;
  return (
    <section className="card" aria-labelledby="check-title">
      <div className="card-head">
        <h2 id="check-title">核对</h2>
        <span className="muted">每条消费按日志自己的倍率复算，并与站点公开的价目表（该分组、当时的价格）比对</span>
      </div>
      {answer.loading ? (
        <p className="state">正在读取核对结果…</p>
      ) : !report ? (
        <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
      ) : report.totals.entries === 0 ? (
        <Empty>
          {report.pending ? "新同步的日志尚未核对，后台一分钟内完成" : "这段时间账本里没有可核对的消费记录"}
        </Empty>
      ) : (
        <>
          <div className="stats">
            <Stat
              label="已核对"
              value={`${formatNumber(report.totals.entries)} 条`}
              note={`能复算 ${formatNumber(report.totals.checked)} 条，能比对价目表 ${formatNumber(report.totals.listChecked)} 条`}
            />
            <Stat
              label="与日志倍率不符"
              value={`${formatNumber(report.totals.differs)} 条`}
              note={`实扣 ${formatUsd(report.totals.checkedChargedUsd)}，应扣 ${formatUsd(report.totals.expectedUsd)}`}
            />
            <Stat
              label="与价目表不符"
              value={`${formatNumber(report.totals.listDiffers)} 条`}
              note={`实扣 ${formatUsd(report.totals.listChargedUsd)}，按价目表 ${formatUsd(report.totals.listExpectedUsd)}`}
            />
            <Stat
              label="多扣"
              value={report.totals.overUsd === 0 ? "—" : signed(report.totals.overUsd)}
              note="不符条目的实扣减去较低的应扣"
            />
          </div>
          {report.pending && <p className="muted">还有新同步的日志尚未核对，后台一分钟内完成。</p>}
          {flagged > 0 && (
            <p className="exports-line">
              <a className="button secondary" href={csv} download={`charge-check_${range.from}_${range.to}.csv`}>
                下载不符条目 CSV
              </a>
            </p>
          )}
          <Rows rows={report.rows.slice(0, ROWS_SHOWN)} />
          {report.rows.length > ROWS_SHOWN && (
            <details className="chart-details">
              <summary>显示全部 {report.rows.length} 行</summary>
              <Rows rows={report.rows.slice(ROWS_SHOWN)} />
            </details>
          )}
          {report.worst.length > 0 && (
            <>
              <h3>多扣最多的条目</h3>
              <ul className="check-worst">
                {report.worst.map((e, i) => (
                  <li key={i}>
                    <details>
                      <summary>
                        {formatLocal(e.at)} · {e.account} · {e.model} · 实扣 {formatUsd(e.chargedUsd)} ·{" "}
                        <strong className={e.overUsd > 0 ? "error-text" : undefined}>
                          {e.overUsd < 0 ? signed(e.overUsd) : `多扣 ${formatUsd(e.overUsd)}`}
                        </strong>
                      </summary>
                      <Arithmetic e={e} />
                    </details>
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
