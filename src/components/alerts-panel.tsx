"use client";

import { useState } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { formatUsd } from "@/src/shared/money";
import { ruleText } from "./alert-kinds";
import { Channels } from "./alert-channels";
import { Digests } from "./alert-digests";
import { Rules } from "./alert-rules";
import { LocalTime } from "./local-time";
import { Empty, Failed, Loading, TableWrap } from "./site-data";
import { day, zone } from "./usage-range";
import { nameOf } from "./workspace-accounts";

const EVENT: Record<string, string> = { opened: "打开", reminder: "每日提醒", escalated: "加重", resolved: "已恢复" };
const DELIVERY: Record<string, string> = { pending: "等待发送", sent: "已送达", failed: "发送失败" };
export function AlertsPanel() {
  return (
    <>
      <AlertList />
      <Reconciliation />
      <Rules />
      <Digests />
      <Channels />
    </>
  );
}

function AlertList() {
  const list = trpc.alerts.list.useQuery({ page: 1, pageSize: 50 });
  const channels = trpc.alerts.channels.useQuery();
  const names = new Map((channels.data?.data.channels ?? []).map((c) => [c.id, c.name]));
  const data = list.data?.data;
  return (
    <section className="card" aria-labelledby="alerts-title">
      <div className="card-head">
        <h2 id="alerts-title">提醒{data && data.open > 0 ? `（${data.open} 个打开）` : ""}</h2>
      </div>
      <p className="muted">
        服务器在每次同步后检查规则：条件连续两次成立才打开并通知一次，持续期间不重复，加重时再通知，恢复时通知「已恢复」。
      </p>
      {list.isPending ? (
        <Loading label="提醒" />
      ) : list.error ? (
        <Failed message={errorMessage(list.error)} onRetry={() => void list.refetch()} />
      ) : !data || data.alerts.length === 0 ? (
        <Empty>目前没有提醒：一切正常。</Empty>
      ) : (
        <ol className="alert-list">
          {data.alerts.map((a) => (
            <li key={a.id} className={`alert-item alert-${a.state}`}>
              <div className="alert-head">
                <span className={`tag tag-${a.state === "open" ? "failed" : "success"}`}>
                  {a.state === "open" ? "打开" : "已恢复"}
                </span>
                <strong>{a.account.name}</strong>
                <span className="muted">{ruleText(a.rule)}</span>
              </div>
              <p>{a.message}</p>
              <p className="muted">
                打开于 <LocalTime iso={a.openedAt} />
                {a.resolvedAt && (
                  <>
                    ，恢复于 <LocalTime iso={a.resolvedAt} />
                  </>
                )}
              </p>
              {a.deliveries.length > 0 && (
                <ul className="delivery-list">
                  {a.deliveries.map((d, i) => (
                    <li key={i} className={d.status === "failed" ? "failed-text" : "muted"}>
                      {EVENT[d.event]} → {names.get(d.channelId) ?? `渠道 #${d.channelId}`}：{DELIVERY[d.status]}
                      {d.lastError && d.status !== "sent" ? `（第 ${d.attempts} 次：${d.lastError}）` : ""}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** 对账: an account's days, its balance change against what its log explains. */
function Reconciliation() {
  const accounts = trpc.workspace.accounts.useQuery();
  const list = accounts.data?.data.accounts ?? [];
  const [picked, setPicked] = useState<number | null>(null);
  const account = picked ?? list[0]?.id ?? null;
  const tz = zone();
  // The last two weeks, in the browser's days.
  const rec = trpc.alerts.reconciliation.useQuery(
    { account: account ?? 1, tz, from: day(-13), to: day(0) },
    { enabled: account !== null },
  );
  const money = (n: number | null) => (n === null ? "—" : formatUsd(n));
  const data = rec.data?.success ? rec.data.data : null;
  return (
    <section className="card" aria-labelledby="reconcile-title">
      <div className="card-head">
        <h2 id="reconcile-title">对账</h2>
        {list.length > 0 && (
          <label className="inline">
            账户{" "}
            <select value={account ?? ""} onChange={(e) => setPicked(Number(e.target.value))}>
              {list.map((a) => (
                <option key={a.id} value={a.id}>
                  {nameOf(a)}（{a.siteName ?? "已移除的站点"}）
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <p className="muted">
        近两周每天的余额变化（当天第一个与最后一个余额快照之间）对照日志：−消费 + 充值 + 签到奖励 + 退款。差额超过 $0.01
        或当天消费的 1% 时标出：可能是日志中没有的扣费、没记入日志的充值，或站点的统计错误。
      </p>
      {account === null ? (
        <Empty>工作区还没有账户。</Empty>
      ) : rec.isPending ? (
        <Loading label="对账" />
      ) : !data ? (
        <Failed
          message={rec.error ? errorMessage(rec.error) : rec.data?.success === false ? rec.data.message : ""}
          onRetry={() => void rec.refetch()}
        />
      ) : (
        <TableWrap label="对账表格">
          <table className="table">
            <thead>
              <tr>
                <th>日期</th>
                <th className="num">余额变化</th>
                <th className="num">消费</th>
                <th className="num">充值</th>
                <th className="num">签到</th>
                <th className="num">退款</th>
                <th className="num">应有变化</th>
                <th className="num">差额</th>
              </tr>
            </thead>
            <tbody>
              {[...data.days].reverse().map((d) => (
                <tr key={d.day} className={d.flagged ? "flagged-row" : undefined}>
                  <td className="nowrap">
                    {d.day}
                    {d.flagged && <span className="tag tag-failed"> 不符</span>}
                  </td>
                  <td className="num">{money(d.changeUsd)}</td>
                  <td className="num">{money(d.consumptionUsd)}</td>
                  <td className="num">{money(d.topupsUsd)}</td>
                  <td className="num">{money(d.rewardsUsd)}</td>
                  <td className="num">{money(d.refundsUsd)}</td>
                  <td className="num">{money(d.expectedUsd)}</td>
                  <td className={`num${d.flagged ? " failed-text" : ""}`}>
                    {d.changeUsd === null ? <span className="muted">快照不足</span> : money(d.differenceUsd)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
