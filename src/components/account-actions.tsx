"use client";

import { useState, type FormEvent } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { usePageAccountHref } from "@/src/trpc/page-account";
import { trpc } from "@/src/trpc/react";
import { formatMoney } from "@/src/shared/money";
import { formatLocal, formatNumber } from "./format";
import { Failed, Loading } from "./site-data";

const KIND: Record<string, string> = { redeem: "兑换码", checkin: "签到", token: "令牌", proxy: "代理" };

/** The account's chores done from here: check-in, a redeem code, and the record of what was done. */
export function AccountActions() {
  return (
    <section className="card" aria-labelledby="actions-title">
      <h2 id="actions-title">账户操作</h2>
      <div className="actions-grid">
        <Checkin />
        <Redeem />
      </div>
      <Records />
    </section>
  );
}

function Checkin() {
  const utils = trpc.useUtils();
  const status = trpc.actions.checkinStatus.useQuery();
  const checkin = trpc.actions.checkin.useMutation();
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const data = status.data?.success ? status.data.data : null;

  async function run() {
    setOutcome(null);
    try {
      const answer = await checkin.mutateAsync();
      setOutcome(answer.success ? { ok: true, text: answer.data.message } : { ok: false, text: answer.message });
      await Promise.all([utils.actions.invalidate(), utils.account.summary.invalidate()]);
    } catch (e) {
      setOutcome({ ok: false, text: errorMessage(e) });
    }
  }

  return (
    <div className="action-box" aria-labelledby="checkin-title">
      <h3 id="checkin-title">签到</h3>
      {status.isPending ? (
        <Loading label="签到状态" />
      ) : status.error || !status.data?.success ? (
        <Failed
          message={
            status.error ? errorMessage(status.error) : status.data?.success === false ? status.data.message : ""
          }
          onRetry={() => void status.refetch()}
        />
      ) : (
        data && (
          <>
            <p className={data.state === "done" ? "gain" : "muted"}>{data.message}</p>
            {data.month && (
              <p className="muted">
                本月已签到 {data.month.checkins} 天，共获得 {formatMoney(data.month.quota, data.money)}
              </p>
            )}
            {data.state === "available" && (
              <button type="button" className="primary" disabled={checkin.isPending} onClick={() => void run()}>
                {checkin.isPending ? "正在签到…" : "签到"}
              </button>
            )}
            {data.state === "manual" && data.manualUrl && (
              <a className="button secondary" href={data.manualUrl} target="_blank" rel="noreferrer noopener">
                去站点手动签到
              </a>
            )}
          </>
        )
      )}
      {outcome && (
        <p className={outcome.ok ? "notice" : "error"} role={outcome.ok ? "status" : "alert"}>
          {outcome.text}
        </p>
      )}
    </div>
  );
}

function Redeem() {
  const utils = trpc.useUtils();
  const redeem = trpc.actions.redeem.useMutation();
  const [code, setCode] = useState("");
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setOutcome(null);
    if (code.trim() === "") {
      setOutcome({ ok: false, text: "请填写兑换码" });
      return;
    }
    try {
      const answer = await redeem.mutateAsync({ code });
      if (answer.success) {
        setCode("");
        setOutcome({ ok: true, text: answer.data.message });
      } else {
        setOutcome({ ok: false, text: answer.message });
      }
      await Promise.all([utils.actions.records.invalidate(), utils.account.summary.invalidate()]);
    } catch (e) {
      setOutcome({ ok: false, text: errorMessage(e) });
    }
  }

  return (
    <form className="action-box" onSubmit={(e) => void submit(e)} aria-labelledby="redeem-title">
      <h3 id="redeem-title">兑换码充值</h3>
      <label className="field">
        <span>兑换码</span>
        <input
          value={code}
          onChange={(e) => setCode(e.target.value)}
          maxLength={256}
          autoComplete="off"
          spellCheck={false}
          placeholder="粘贴站点发放的兑换码"
        />
      </label>
      <button type="submit" className="primary" disabled={redeem.isPending}>
        {redeem.isPending ? "正在兑换…" : "兑换"}
      </button>
      {outcome && (
        <p className={outcome.ok ? "notice" : "error"} role={outcome.ok ? "status" : "alert"}>
          {outcome.text}
        </p>
      )}
    </form>
  );
}

function Records() {
  const records = trpc.actions.records.useQuery({ page: 1, pageSize: 10 });
  const csv = usePageAccountHref("/api/account/actions.csv");
  const items = records.data?.data.items ?? [];
  return (
    <div aria-labelledby="records-title">
      <h3 id="records-title">操作记录</h3>
      {records.isPending ? (
        <p className="state">正在读取操作记录…</p>
      ) : items.length === 0 ? (
        <p className="muted">还没有通过本服务做过的操作。</p>
      ) : (
        <ol className="audit-list">
          {items.map((r) => (
            <li key={`${r.at}-${r.kind}-${r.message}`}>
              <time className="nowrap muted" dateTime={r.at}>
                {formatLocal(r.at)}
              </time>
              <span>
                <span className={`tag tag-${r.ok ? "success" : "failed"}`}>{KIND[r.kind] ?? r.kind}</span> {r.message}
                <span className="muted"> · {r.device}</span>
              </span>
            </li>
          ))}
        </ol>
      )}
      {records.data && records.data.data.total > 0 && (
        <p className="muted">
          {records.data.data.total > items.length
            ? `共 ${formatNumber(records.data.data.total)} 条，显示最近 10 条。`
            : ""}
          <a href={csv} download>
            下载全部操作记录（CSV）
          </a>
        </p>
      )}
    </div>
  );
}

const ALL_STATE: Record<string, string> = {
  done: "已签到",
  already: "今天已签过",
  manual: "需手动签到",
  disabled: "站点未开启",
  unsupported: "不支持签到",
  failed: "失败",
};

/** 全部签到: every account checked in where it can be, each one's outcome listed. */
export function CheckinAll() {
  const utils = trpc.useUtils();
  const all = trpc.actions.checkinAll.useMutation();
  const [error, setError] = useState("");
  async function run() {
    setError("");
    try {
      await all.mutateAsync();
      await utils.invalidate();
    } catch (e) {
      setError(errorMessage(e));
    }
  }
  const results = all.data?.data.results;
  return (
    <>
      <button type="button" className="ghost" disabled={all.isPending} onClick={() => void run()}>
        {all.isPending ? "正在签到…" : "全部签到"}
      </button>
      {(results || error) && (
        <div className="checkin-all" role="status" aria-label="全部签到的结果">
          {error && <p className="error">{error}</p>}
          {results && (
            <ul>
              {results.map((r) => (
                <li key={r.name}>
                  <span
                    className={`tag tag-${r.state === "done" ? "success" : r.state === "failed" ? "failed" : "pending"}`}
                  >
                    {ALL_STATE[r.state] ?? r.state}
                  </span>{" "}
                  {r.name}
                  <span className="muted">：{r.message}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </>
  );
}

const AUTO_STATE: Record<string, string> = {
  done: "已签到",
  already: "今天已签过",
  manual: "需手动签到",
  disabled: "站点未开启签到",
  unsupported: "站点没有签到功能",
  failed: "失败",
};

/** The last automatic check-in of a saved account, in one line ("自动签到 11-24：已签到，获得 $0.0050"). */
export function AutoCheckinLine({
  checkin,
}: {
  checkin: { day: string; state: string; message: string; at: string } | null;
}) {
  if (!checkin) return <span className="muted sync-line">自动签到：等待今天的签到时刻</span>;
  const bad = checkin.state === "failed" || checkin.state === "manual";
  const detail = checkin.state === "done" ? checkin.message : `${AUTO_STATE[checkin.state] ?? checkin.state}`;
  return (
    <span className={`sync-line ${bad ? "failed-text" : "muted"}`} title={checkin.message}>
      自动签到 {checkin.day.slice(5)}：{detail}
      {checkin.state === "failed" ? `（${checkin.message}）` : ""}
    </span>
  );
}
