"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { formatMoney, formatUsd } from "@/src/shared/money";
import { AutoCheckinLine, CheckinAll } from "./account-actions";
import { formatAge, formatLocal, formatNumber } from "./format";
import { Empty, Failed, Loading, Stat } from "./site-data";
import { zone } from "./usage-range";
import { Reauthorize } from "./workspace-accounts";
import { useQueryState } from "./pager";
import { Sparkline } from "./sparkline";
import { FIGURES } from "../shared/figures";

type Listed = RouterOutputs["account"]["list"]["accounts"][number];

const STATE: Record<string, string> = {
  ok: "正常",
  unreachable: "站点无法访问",
  refused: "令牌被拒绝",
  expired: "会话已过期",
  syncing: "首次同步中",
};

/** A row's state in words: a workspace's account says what the person can do about it. */
function stateLabel(a: Listed, state: string): string {
  if (a.saved?.state === "reauth") return "需要重新授权";
  if (a.saved?.state === "site_removed") return "站点已移除";
  return STATE[state] ?? state;
}

const SORTS = ["balance", "today", "name"] as const;
type Sort = (typeof SORTS)[number];

/** What the server last did for a saved account while nobody was looking: its ledger's sync. */
function SyncLine({ sync }: { sync: NonNullable<NonNullable<Listed["saved"]>["sync"]> }) {
  if (sync.running) return <span className="muted sync-line">正在同步用量…</span>;
  if (sync.error) {
    return (
      <span className="sync-line failed-text" title={sync.error}>
        同步失败{sync.at ? `（上次成功 ${formatAge(sync.at)}）` : ""}：{sync.error}
      </span>
    );
  }
  if (!sync.at) return <span className="muted sync-line">等待首次同步</span>;
  return (
    <span className="muted sync-line" title={sync.next ? `下次约 ${formatLocal(sync.next).slice(11)}` : undefined}>
      用量同步于 {formatAge(sync.at)}
    </span>
  );
}

/**
 * Every account of this browser on one page: each site is asked side by side and its row fills
 * in as it answers; a site that hangs or fails marks only its own row.
 */
export function AccountsOverview() {
  const router = useRouter();
  const utils = trpc.useUtils();
  const [tz] = useState(zone);
  const [sortParam, setSort] = useQueryState("sort", "balance");
  const sort: Sort = SORTS.includes(sortParam as Sort) ? (sortParam as Sort) : "balance";
  const [refreshing, setRefreshing] = useState(false);
  const [opening, setOpening] = useState<string | null>(null);
  const [message, setMessage] = useState("");
  const [search, setSearch] = useQueryState("q", "");
  const [tag, setTag] = useQueryState("tag", "");
  const list = trpc.account.list.useQuery();
  const everyAccount = list.data?.accounts ?? [];
  const tags = [...new Set(everyAccount.flatMap((a) => a.saved?.tags ?? []))].sort();
  const needle = search.trim().toLowerCase();
  // A workspace's accounts are searched by name, site and user id, and filtered by tag.
  const accounts = everyAccount.filter(
    (a) =>
      (tag === "" || (a.saved?.tags ?? []).includes(tag)) &&
      (needle === "" ||
        [a.saved?.alias ?? "", a.displayName, a.username, a.site?.name ?? "", String(a.userId)].some((t) =>
          t.toLowerCase().includes(needle),
        )),
  );
  // A workspace's rows the ledger holds fresh come at once in one answer; only the others ask their sites.
  // Rows waiting for their first sync (the balance their site gave when added) are asked again
  // every 15 s until the runner has synced them.
  const stored = trpc.account.storedRows.useQuery(
    { tz },
    {
      enabled: list.isSuccess,
      refetchInterval: (q) => (q.state.data?.rows.some((r) => r.row.state === "syncing") ? 15_000 : false),
    },
  );
  const storedOf = new Map((stored.data?.rows ?? []).map((r) => [r.key, r.row]));
  const rows = trpc.useQueries((t) =>
    accounts.map((a) =>
      t.account.overviewRow({ key: a.key, tz }, { enabled: stored.isFetched && !storedOf.has(a.key) }),
    ),
  );
  const switchTo = trpc.account.switch.useMutation();
  // Each account's balance over the last 30 days and today's income, from the ledger.
  const trends = trpc.usage.trends.useQuery({ accounts: "all", tz }, { enabled: list.isSuccess });
  const trendOf = new Map((trends.data?.data.accounts ?? []).map((t) => [`${t.siteId}:${t.userId}`, t]));

  async function refresh() {
    setRefreshing(true);
    await Promise.all(
      accounts.map(async (a) =>
        utils.account.overviewRow.setData(
          { key: a.key, tz },
          await utils.client.account.overviewRow.query({ key: a.key, tz, refresh: true }),
        ),
      ),
    ).catch(() => undefined);
    setRefreshing(false);
  }

  async function open(a: Listed) {
    setOpening(a.key);
    setMessage("");
    try {
      if (!a.active) await switchTo.mutateAsync({ key: a.key });
      await utils.invalidate();
      router.push("/?tab=overview");
      router.refresh();
    } catch (e) {
      setMessage(errorMessage(e));
      setOpening(null);
    }
  }

  if (list.isPending) return <Loading label="账户列表" />;
  if (list.error) return <Failed message={errorMessage(list.error)} onRetry={() => void list.refetch()} />;

  const loaded = accounts.map((a, i) => ({ account: a, row: rows[i]?.data ?? storedOf.get(a.key) }));
  // Accounts the person left out of totals are listed, not summed.
  const counted = loaded.filter((x) => !x.account.saved?.excluded);
  const excluded = loaded.length - counted.length;
  const ok = counted.filter((x) => x.row?.state === "ok" && x.row.summary);
  // A site that cannot be read counts with the balance its last sync noted, and the total says so.
  const stale = counted.filter((x) => x.row && x.row.state !== "ok" && x.row.state !== "expired" && x.row.lastKnown);
  // Accounts waiting for their first sync count with the balance their site gave when added.
  const syncing = stale.filter((x) => x.row?.state === "syncing");
  const unreadable = stale.filter((x) => x.row?.state !== "syncing");
  const staleSince = unreadable.map((x) => x.row?.lastKnown?.at ?? "").sort()[0];
  const totalBalance =
    ok.reduce((s, x) => s + (x.row?.summary?.balance.usd ?? 0), 0) +
    stale.reduce((s, x) => s + (x.row?.lastKnown?.balance.usd ?? 0), 0);
  const totalToday = ok.reduce((s, x) => s + (x.row?.summary?.today.usd ?? 0), 0);
  const totalRequests = ok.reduce((s, x) => s + (x.row?.summary?.todayRequests ?? 0), 0);
  const converted = ok.filter((x) => x.row?.summary?.money.display !== "USD").length;
  const pending = loaded.filter((x) => !x.row).length;

  const value = (x: (typeof loaded)[number]) =>
    sort === "balance" ? x.row?.summary?.balance.usd : sort === "today" ? x.row?.summary?.today.usd : undefined;
  const sorted =
    sort === "name"
      ? loaded
      : [...loaded].sort((p, q) => (value(q) ?? Number.NEGATIVE_INFINITY) - (value(p) ?? Number.NEGATIVE_INFINITY));

  return (
    <section className="card" aria-labelledby="all-accounts-title">
      <div className="card-head">
        <h2 id="all-accounts-title">全部账户</h2>
        <div className="freshness">
          <label className="inline">
            排序
            <select value={sort} onChange={(e) => setSort(e.target.value)}>
              <option value="balance">按余额</option>
              <option value="today">按今日消费</option>
              <option value="name">{everyAccount.some((a) => a.saved) ? "按设定的顺序" : "按最近使用"}</option>
            </select>
          </label>
          <button type="button" className="ghost" disabled={refreshing} onClick={() => void refresh()}>
            {refreshing ? "正在刷新…" : "刷新"}
          </button>
        </div>
      </div>
      <div className="bulk-actions">
        <CheckinAll />
      </div>

      {everyAccount.some((a) => a.saved) && (
        <div className="filter-bar">
          <label className="inline">
            搜索
            <input
              type="search"
              value={search}
              placeholder="名称、站点或用户ID"
              onChange={(e) => setSearch(e.target.value)}
            />
          </label>
          {tags.length > 0 && (
            <label className="inline">
              标签
              <select value={tag} onChange={(e) => setTag(e.target.value)}>
                <option value="">全部</option>
                {tags.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
          )}
        </div>
      )}

      <section className="stats" aria-label="合计">
        <Stat
          label="总余额"
          value={formatUsd(totalBalance)}
          note={
            `${ok.length + stale.length} 个账户合计（美元）` +
            (converted > 0 ? `，其中 ${converted} 个按站点设置从其他货币折算` : "") +
            (staleSince
              ? `，${unreadable.length} 个站点暂时无法读取，按最近同步的余额计入（最早 ${formatAge(staleSince)}）`
              : "") +
            (syncing.length > 0 ? `，${syncing.length} 个首次同步中，按添加时站点报告的余额计入` : "") +
            (pending > 0 ? `，${pending} 个仍在读取` : "") +
            (excluded > 0 ? `；${excluded} 个设为不计入合计` : "")
          }
        />
        <Stat
          label="今日消费"
          value={formatUsd(totalToday)}
          note={
            `今日请求 ${formatNumber(totalRequests)} 次` +
            (syncing.length > 0 ? `；${syncing.length} 个首次同步中的账户同步后计入` : "")
          }
        />
        {trends.data && (
          <Stat
            label="今日收入"
            value={formatUsd(trends.data.data.totals.incomeTodayUsd)}
            note="充值、兑换码、签到等奖励和退款，按各账户的用量账本"
          />
        )}
      </section>
      {trends.data && trends.data.data.days.length > 1 && (
        <div className="total-trend">
          <span className="muted">总余额 · 近 {trends.data.data.days.length} 天</span>
          <Sparkline values={trends.data.data.totals.balancesUsd} label="总余额走势" width={560} height={56} />
        </div>
      )}

      {accounts.length === 0 ? (
        <Empty>{everyAccount.length > 0 ? "没有符合条件的账户" : "本浏览器还没有账户"}</Empty>
      ) : (
        <ul className="account-rows" aria-label="账户">
          {sorted.map(({ account: a, row }) => {
            const s = row?.summary;
            const trend = a.site ? trendOf.get(`${a.site.id}:${a.userId}`) : undefined;
            // 预计可用天数, as every surface gives it: wallet and plans at the last 7 days' pace.
            const daysLeft = row?.daysLeft ?? null;
            const low = daysLeft !== null && daysLeft < 3;
            // The balance over the last 30 days, under the balance.
            const line = trend ? <Sparkline values={trend.balancesUsd} label="近 30 天余额" /> : null;
            return (
              <li key={a.key} className={a.active ? "current" : undefined}>
                <button type="button" className="account-row" disabled={opening !== null} onClick={() => void open(a)}>
                  {/* The row's name is what it shows (balance and spend included), told what it does. */}
                  <span className="visually-hidden">打开账户：</span>
                  <span className="who">
                    <strong>
                      {a.saved?.pinned ? "📌 " : ""}
                      {a.saved?.alias || a.displayName || a.username || `用户 ${a.userId}`}
                    </strong>
                    <span className="muted">
                      {a.site?.name ?? "已移除的站点"} · 用户ID {a.userId}
                      {a.active ? " · 当前" : ""}
                      {a.saved?.excluded ? " · 不计入合计" : ""}
                      {a.saved?.tags.length ? ` · ${a.saved.tags.join("、")}` : ""}
                    </span>
                    {a.saved?.sync && <SyncLine sync={a.saved.sync} />}
                    {a.saved?.autoCheckin && <AutoCheckinLine checkin={a.saved.checkin} />}
                    {trend && trend.incomeTodayUsd > 0 && (
                      <span className="muted sync-line">今日收入 {formatUsd(trend.incomeTodayUsd)}</span>
                    )}
                    {a.saved?.alerts?.[0] && (
                      <span className="sync-line failed-text">
                        ⚠ 提醒：{a.saved.alerts[0].message}
                        {a.saved.alerts.length > 1 ? `（共 ${a.saved.alerts.length} 个）` : ""}
                      </span>
                    )}
                  </span>
                  {!row ? (
                    <span className="muted row-state">读取中…</span>
                  ) : (row.state !== "ok" || !s) && row.lastKnown ? (
                    <>
                      <span className="figure">
                        <span className="muted">余额</span>
                        <span>{formatUsd(row.lastKnown.balance.usd)}</span>
                        {line}
                      </span>
                      <span
                        className={`row-state tag tag-${row.state === "refused" ? "failed" : row.state === "syncing" ? "pending" : "disabled"}`}
                        title={row.message ?? undefined}
                      >
                        {stateLabel(a, row.state)} · {formatAge(row.lastKnown.at)}的数据
                      </span>
                    </>
                  ) : row.state !== "ok" || !s ? (
                    <span
                      className={`row-state tag tag-${row.state === "refused" ? "failed" : "disabled"}`}
                      title={row.message ?? undefined}
                    >
                      {stateLabel(a, row.state)}
                    </span>
                  ) : (
                    <>
                      <span className="figure">
                        <span className="muted" title={`数据时间 ${formatLocal(s.fetchedAt)}`}>
                          余额{Date.now() - Date.parse(s.fetchedAt) > 90_000 ? `（${formatAge(s.fetchedAt)}）` : ""}
                        </span>
                        <span>
                          {formatMoney(s.balance.quota, s.money)}
                          {low ? (
                            <span
                              className="warn"
                              title={`${FIGURES.daysLeft.name} ${daysLeft?.toFixed(1)} 天（按近 7 天的消费速度，钱包与套餐合计）`}
                            >
                              <span aria-hidden="true"> ⚠</span>
                              <span className="visually-hidden">（余额不足 3 天）</span>
                            </span>
                          ) : null}
                        </span>
                        {line}
                      </span>
                      <span className="figure">
                        <span className="muted">今日消费</span>
                        <span>{formatMoney(s.today.quota, s.money)}</span>
                      </span>
                      <span className="figure">
                        <span className="muted">今日请求</span>
                        <span>{s.todayRequests === null ? "—" : formatNumber(s.todayRequests)}</span>
                      </span>
                    </>
                  )}
                </button>
                {a.saved?.state === "reauth" && (
                  <div className="row-reauth">
                    <span className="muted">{row?.message ?? a.saved.stateMessage}</span>
                    <Reauthorize id={a.saved.id} onDone={() => void utils.invalidate()} />
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <span className="error" role="status" aria-live="polite">
        {message}
      </span>
    </section>
  );
}
