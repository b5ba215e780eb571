"use client";

import { useEffect, useMemo } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { formatLocal, formatNumber } from "./format";
import { Failed } from "./site-data";

/** The active account's ledger: how far it is synced, a sync under way with its progress, the last error. */
export function SyncStatus() {
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
          已拒收 {formatNumber(s.skipped.count)} 条超出合理范围的日志
          {s.skipped.reason ? `（${s.skipped.reason}）` : ""}
        </p>
      )}
      {sync.error && <p className="state failed">{errorMessage(sync.error)}</p>}
    </div>
  );
}
