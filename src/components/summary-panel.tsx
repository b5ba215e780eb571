"use client";

import { useState } from "react";
import { trpc } from "@/src/trpc/react";
import { formatCount, formatMoney, formatUsd, type MoneySettings } from "@/src/shared/money";
import { FAMILY_NAMES, formatAge, formatNumber } from "./format";
import { Failed, Freshness, Loading, Stat, useSiteData } from "./site-data";
import { zone } from "./usage-range";

/** The summary's input: today is the browser's today. */
function useSummaryInput() {
  const [input] = useState(() => ({ tz: zone() }));
  return input;
}

/** The site's money settings, from the (shared, cached) summary; null until known. */
export function useMoney(): MoneySettings | null {
  const query = trpc.account.summary.useQuery(useSummaryInput());
  return query.data?.success ? query.data.data.money : null;
}

/**
 * While the site cannot be read: the balance the last sync noted, with its age, above the reason
 * and a retry (docs/design.md 19), never a blank page or a zero.
 */
function LastKnown({ message, onRetry }: { message: string; onRetry: () => void }) {
  const last = trpc.usage.lastBalance.useQuery();
  const known = last.data?.data;
  return (
    <>
      {known && (
        <section className="stats" aria-label="最近同步的额度">
          <Stat
            label="剩余额度（最近同步）"
            value={formatUsd(known.balance.usd)}
            note={`站点无法读取 · ${formatAge(known.at)}的数据 · ${formatNumber(known.balance.quota)} 额度`}
          />
        </section>
      )}
      <Failed message={message} onRetry={onRetry} />
    </>
  );
}

/** Live balance, spend and requests, read from the account's site. */
export function SummaryPanel() {
  const input = useSummaryInput();
  const { answer, refreshing, refresh } = useSiteData("summary", input);

  if (answer.loading) return <Loading label="余额" />;
  if (!answer.data) return <LastKnown message={answer.message ?? ""} onRetry={refresh} />;
  const s = answer.data;
  const money = (quota: number) => formatMoney(quota, s.money);
  const rawNote = (quota: number) => (s.money.display === "TOKENS" ? null : `${formatNumber(quota)} 额度`);
  return (
    <>
      <section className="stats" aria-label="额度">
        <Stat label="剩余额度" value={money(s.balance.quota)} note={rawNote(s.balance.quota)} />
        <Stat label="今日消费" value={money(s.today.quota)} note={rawNote(s.today.quota)} />
        <Stat label="已用额度" value={money(s.used.quota)} note={rawNote(s.used.quota)} />
        <Stat label="请求次数" value={formatCount(s.requestCount)} note={`共 ${formatNumber(s.requestCount)} 次`} />
      </section>
      <div className="panel-foot">
        <span className="muted">
          站点类型：{FAMILY_NAMES[s.site.family] ?? s.site.family}
          {s.money.display === "CNY" || s.money.display === "CUSTOM"
            ? ` · 1 美元 = ${s.money.rate} ${s.money.symbol}`
            : ""}
        </span>
        <Freshness fetchedAt={s.fetchedAt} busy={refreshing} onRefresh={refresh} cacheSeconds={30} />
      </div>
    </>
  );
}
