"use client";

import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { formatAmount, formatUsd } from "@/src/shared/money";
import { formatLocal } from "./format";
import { Pager, pageParam } from "./pager";
import { Empty, Failed, Freshness, Loading, TableWrap, useSiteData } from "./site-data";

const STATUS: Record<string, string> = { success: "成功", pending: "待支付", failed: "失败", expired: "已过期" };
const METHOD: Record<string, string> = { alipay: "支付宝", wxpay: "微信支付", stripe: "Stripe", balance: "余额" };

/**
 * The currency a payment was made in, by its method: the Chinese payment services charge in yuan
 * (at the site's price per dollar), the card processors in dollars; another method's amount is
 * shown without a sign rather than with a wrong one.
 */
const PAID_IN: Record<string, string> = { alipay: "¥", wxpay: "¥", qqpay: "¥", epay: "¥", stripe: "$", creem: "$" };

/** Top-up orders where the site keeps them for its users (current new-api: the last 30 days). */
export function TopupsPanel() {
  const params = useSearchParams();
  const input = { page: pageParam(params.get("page")), pageSize: 20 };
  const { answer, refreshing, refresh } = useSiteData("topups", input);

  return (
    <section className="card" aria-labelledby="topups-title">
      <div className="card-head">
        <h2 id="topups-title">充值记录</h2>
        {answer.data?.supported && (
          <Freshness fetchedAt={answer.data.fetchedAt} busy={refreshing} onRefresh={refresh} cacheSeconds={15} />
        )}
      </div>
      {answer.loading ? (
        <Loading label="充值记录" />
      ) : !answer.data ? (
        <Failed message={answer.message ?? ""} onRetry={refresh} />
      ) : !answer.data.supported ? (
        <Empty>
          这个站点不向用户提供充值订单记录。充值会记在使用日志里：
          <Link href="?tab=logs&type=topup">查看充值类日志</Link>
        </Empty>
      ) : answer.data.items.length === 0 ? (
        <Empty>最近 30 天没有充值记录</Empty>
      ) : (
        <>
          <p className="muted">站点只提供最近 30 天的充值订单。</p>
          <TableWrap label="充值记录表格">
            <table className="table">
              <thead>
                <tr>
                  <th>下单时间</th>
                  <th>完成时间</th>
                  <th className="num">充值额度</th>
                  <th className="num">实付金额</th>
                  <th>方式</th>
                  <th>状态</th>
                  <th>订单号</th>
                </tr>
              </thead>
              <tbody>
                {answer.data.items.map((t) => (
                  <tr key={t.tradeNo || `${t.createdAt}`}>
                    <td className="nowrap">{formatLocal(t.createdAt)}</td>
                    <td className="nowrap">{formatLocal(t.completedAt)}</td>
                    <td className="num">{t.amountUsd === null ? "未知" : formatUsd(t.amountUsd)}</td>
                    <td className="num">
                      {t.money === null
                        ? "未知"
                        : PAID_IN[t.method] !== undefined
                          ? formatAmount(t.money, PAID_IN[t.method] ?? "")
                          : t.money.toLocaleString("zh-CN", { minimumFractionDigits: 2 })}
                    </td>
                    <td>{METHOD[t.method] ?? (t.method || "—")}</td>
                    <td>
                      <span className={`tag tag-${t.status}`}>{STATUS[t.status] ?? t.status}</span>
                    </td>
                    <td>
                      <code>{t.tradeNo}</code>
                    </td>
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
