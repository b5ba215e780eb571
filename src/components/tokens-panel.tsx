"use client";

import { useSearchParams } from "next/navigation";
import { formatMoney } from "@/src/shared/money";
import { formatLocal, formatNumber } from "./format";
import { Pager, pageParam } from "./pager";
import { Empty, Failed, Freshness, Loading, TableWrap, useSiteData } from "./site-data";
import { useMoney } from "./summary-panel";

const STATUS: Record<string, string> = {
  enabled: "已启用",
  disabled: "已禁用",
  expired: "已过期",
  exhausted: "已用尽",
};

/** The account's API tokens on its site; keys arrive masked from the service. */
export function TokensPanel() {
  const params = useSearchParams();
  const money = useMoney();
  const input = { page: pageParam(params.get("page")), pageSize: 20 };
  const { answer, refreshing, refresh } = useSiteData("tokens", input);
  const moneyOf = (quota: number) => (money ? formatMoney(quota, money) : formatNumber(quota));

  return (
    <section className="card" aria-labelledby="tokens-title">
      <div className="card-head">
        <h2 id="tokens-title">令牌</h2>
        {answer.data && (
          <Freshness fetchedAt={answer.data.fetchedAt} busy={refreshing} onRefresh={refresh} cacheSeconds={15} />
        )}
      </div>
      {answer.loading ? (
        <Loading label="令牌" />
      ) : !answer.data ? (
        <Failed message={answer.message ?? ""} onRetry={refresh} />
      ) : answer.data.items.length === 0 ? (
        <Empty>{input.page > 1 ? "这一页没有令牌" : "这个账户还没有令牌"}</Empty>
      ) : (
        <>
          <TableWrap label="令牌表格">
            <table className="table">
              <thead>
                <tr>
                  <th>名称</th>
                  <th>密钥</th>
                  <th>状态</th>
                  <th className="num">剩余额度</th>
                  <th className="num">已用额度</th>
                  <th>过期时间</th>
                  <th>最近使用</th>
                </tr>
              </thead>
              <tbody>
                {answer.data.items.map((t) => (
                  <tr key={t.id}>
                    <td>
                      {t.name || "—"}
                      {t.group ? <span className="muted"> · {t.group}</span> : null}
                    </td>
                    <td>
                      <code>{t.key}</code>
                    </td>
                    <td>
                      <span className={`tag tag-${t.status}`}>{STATUS[t.status] ?? t.status}</span>
                    </td>
                    <td className="num">{t.unlimited ? "无限" : moneyOf(t.remainQuota)}</td>
                    <td className="num">{moneyOf(t.usedQuota)}</td>
                    <td className="nowrap">{t.expiresAt ? formatLocal(t.expiresAt) : "永不过期"}</td>
                    <td className="nowrap">{t.lastUsedAt ? formatLocal(t.lastUsedAt) : "从未使用"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager of={answer.data} />
        </>
      )}
    </section>
  );
}
