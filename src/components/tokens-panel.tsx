"use client";

import { useSearchParams } from "next/navigation";
import { useState } from "react";
import { trpc } from "@/src/trpc/react";
import { formatLocal, formatMoney, formatNumber } from "./format";
import { Pager } from "./pager";
import { Empty, Failed, Freshness, Loading, useAnswer } from "./site-data";
import { useMoney } from "./summary-panel";

const STATUS: Record<string, string> = {
  enabled: "已启用",
  disabled: "已禁用",
  expired: "已过期",
  exhausted: "已用尽",
};

function positive(raw: string | null): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** The account's API tokens on its site; keys arrive masked from the service. */
export function TokensPanel() {
  const params = useSearchParams();
  const money = useMoney();
  const input = { page: positive(params.get("page")), pageSize: 20 };
  const query = trpc.account.tokens.useQuery(input);
  const utils = trpc.useUtils();
  const [refreshing, setRefreshing] = useState(false);
  const answer = useAnswer(query);
  const moneyOf = (quota: number) => (money ? formatMoney(quota, money) : formatNumber(quota));

  async function refresh() {
    setRefreshing(true);
    try {
      utils.account.tokens.setData(input, await utils.client.account.tokens.query({ ...input, refresh: true }));
    } catch {
      await query.refetch();
    }
    setRefreshing(false);
  }

  return (
    <section className="card" aria-labelledby="tokens-title">
      <div className="card-head">
        <h2 id="tokens-title">令牌</h2>
        {answer.data && (
          <Freshness
            fetchedAt={answer.data.fetchedAt}
            busy={refreshing}
            onRefresh={() => void refresh()}
            cacheSeconds={15}
          />
        )}
      </div>
      {answer.loading ? (
        <Loading label="令牌" />
      ) : !answer.data ? (
        <Failed message={answer.message ?? ""} onRetry={() => void refresh()} />
      ) : answer.data.items.length === 0 ? (
        <Empty>{input.page > 1 ? "这一页没有令牌" : "这个账户还没有令牌"}</Empty>
      ) : (
        <>
          <div className="table-wrap">
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
          </div>
          <Pager
            page={answer.data.page}
            pageSize={answer.data.pageSize}
            total={answer.data.total}
            hasMore={answer.data.hasMore}
            shown={answer.data.items.length}
          />
        </>
      )}
    </section>
  );
}
