"use client";

import { useState } from "react";
import { usePageAccountHref } from "@/src/trpc/page-account";
import { trpc } from "@/src/trpc/react";
import { formatNumber } from "./format";
import { useAnswer } from "./site-data";
import type { Range } from "./usage-range";

/** Downloads of the ledger: the range's CSV (its row count first), its 对账 CSV, and a month's PDF statement. */
export function Exports({ range, tz, accounts }: { range: Range; tz: string; accounts: "active" | "all" }) {
  const [month, setMonth] = useState(() => range.to.slice(0, 7));
  const countQuery = trpc.export.count.useQuery({ ...range, tz, accounts });
  const count = useAnswer(countQuery);
  const csv = usePageAccountHref(`/api/export/usage.csv?${new URLSearchParams({ ...range, tz, accounts })}`);
  const pdf = usePageAccountHref(`/api/export/statement.pdf?${new URLSearchParams({ month, tz, accounts })}`);
  const reconciliation = usePageAccountHref(
    `/api/export/reconciliation.csv?${new URLSearchParams({ ...range, tz, accounts })}`,
  );
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
            <a
              className="button secondary"
              href={reconciliation}
              download={`reconciliation_${range.from}_${range.to}.csv`}
            >
              下载对账 CSV
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
