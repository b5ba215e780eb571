"use client";

import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { Fragment, useState } from "react";
import { LOG_TYPES, LOG_TYPE_NAMES, logTypeName, topupQuota, type LogType } from "@/src/shared/log-types";
import { formatCount, formatMoney } from "@/src/shared/money";
import { trpc } from "@/src/trpc/react";
import { formatAge, formatDuration, formatLocal, formatNumber } from "./format";
import { LogDetail, type LogEntry } from "./log-detail";
import { Pager, pageParam, useHrefWith } from "./pager";
import { Empty, Failed, Freshness, Loading, TableWrap, useSiteData } from "./site-data";
import { useMoney } from "./summary-panel";
import { zone } from "./usage-range";
import { rangeRefusal } from "@/src/shared/ranges";

/** The page sizes a person may choose (`?size=`); the first is the default. */
const PAGE_SIZES = [20, 50, 100] as const;
const sizeParam = (size: string | null) => PAGE_SIZES.find((n) => String(n) === size) ?? PAGE_SIZES[0];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A `YYYY-MM-DD` from the URL, sent as a calendar day in the browser's zone. */
const dayParam = (day: string) => (DATE.test(day) ? day : undefined);

/** A type filter from the URL: one the log has, else none. */
const typeParam = (type: string) => LOG_TYPES.find((t): t is Exclude<LogType, "other"> => t === type && t !== "other");

/** The usage log, newest first, filtered and paged by the URL's query string. */
export function LogsPanel() {
  const summaryMoney = useMoney();
  const params = useSearchParams();
  const router = useRouter();
  const hrefWith = useHrefWith();
  const filters = {
    type: params.get("type") ?? "",
    model: params.get("model") ?? "",
    token: params.get("token") ?? "",
    from: params.get("from") ?? "",
    to: params.get("to") ?? "",
  };
  const pageSize = sizeParam(params.get("size"));
  const input = {
    page: pageParam(params.get("page")),
    pageSize,
    type: typeParam(filters.type),
    model: filters.model || undefined,
    token: filters.token || undefined,
    from: dayParam(filters.from),
    to: dayParam(filters.to),
    tz: zone(),
  };
  const { answer, refreshing, refresh } = useSiteData("logs", input);
  // The names the ledger knows, offered as the model and token fields are typed.
  const names = trpc.account.logNames.useQuery(undefined, { staleTime: 5 * 60_000 });
  const [invalid, setInvalid] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  // The answer's own money settings (the site's, kept with it): the same whichever source answered.
  const money = answer.data?.money ?? summaryMoney;
  const moneyOf = (quota: number) => (money ? formatMoney(quota, money) : formatNumber(quota));

  function apply(form: HTMLFormElement) {
    const data = new FormData(form);
    const value = (k: string) => {
      const v = data.get(k);
      return typeof v === "string" ? v.trim() : "";
    };
    // Said here, before anything is asked, in the service's own words (it refuses them on `to`).
    const refused = value("from") && value("to") ? rangeRefusal(value("from"), value("to")) : null;
    if (refused) {
      setInvalid(refused);
      return;
    }
    setInvalid("");
    router.push(
      hrefWith({
        type: value("type"),
        model: value("model"),
        token: value("token"),
        from: value("from"),
        to: value("to"),
        size: value("size") === String(PAGE_SIZES[0]) ? "" : value("size"),
        page: null,
      }),
      { scroll: false },
    );
  }

  const filtered = Object.values(filters).some(Boolean);
  return (
    <section className="card" aria-labelledby="logs-title">
      <div className="card-head">
        <h2 id="logs-title">使用日志</h2>
        {answer.data && (
          <Freshness fetchedAt={answer.data.fetchedAt} busy={refreshing} onRefresh={refresh} cacheSeconds={15} />
        )}
      </div>
      <form
        className="filters"
        key={params.toString()}
        onSubmit={(e) => {
          e.preventDefault();
          apply(e.currentTarget);
        }}
      >
        <label>
          类型
          <select name="type" defaultValue={filters.type}>
            <option value="">全部</option>
            {Object.entries(LOG_TYPE_NAMES)
              .filter(([k]) => k !== "other")
              .map(([k, name]) => (
                <option key={k} value={k}>
                  {name}
                </option>
              ))}
          </select>
        </label>
        <label>
          模型
          <input name="model" list="log-models" defaultValue={filters.model} maxLength={128} placeholder="如 claude" />
        </label>
        <label>
          令牌
          <input name="token" list="log-tokens" defaultValue={filters.token} maxLength={128} placeholder="令牌名称" />
        </label>
        <datalist id="log-models">
          {names.data?.models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
        <datalist id="log-tokens">
          {names.data?.tokens.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <label>
          开始日期
          <input name="from" type="date" defaultValue={filters.from} />
        </label>
        <label>
          结束日期
          <input name="to" type="date" defaultValue={filters.to} />
        </label>
        <label>
          每页
          <select name="size" defaultValue={String(pageSize)}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n} 条
              </option>
            ))}
          </select>
        </label>
        <div className="filter-actions">
          <button type="submit" className="primary">
            筛选
          </button>
          {filtered && (
            <button
              type="button"
              className="secondary"
              onClick={() =>
                router.push(hrefWith({ type: null, model: null, token: null, from: null, to: null, page: null }), {
                  scroll: false,
                })
              }
            >
              清除
            </button>
          )}
        </div>
      </form>

      {invalid && (
        <p className="error" role="alert">
          {invalid}
        </p>
      )}
      {answer.data?.fromLedger && (
        <p className="notice" role="status">
          站点暂时无法读取（{answer.data.fromLedger.reason}）。以下是本服务账本中的记录，截至{" "}
          {formatAge(answer.data.fetchedAt)}的同步；站点恢复后将显示站点的实时日志。
        </p>
      )}
      {answer.data?.ledger?.recent === "failed" && (
        <p className="notice" role="status">
          站点暂时无法读取（{answer.data.ledger.reason}），{formatAge(answer.data.ledger.syncedAt)}
          同步之后的日志未包含在内；以下是本服务账本中的记录。
        </p>
      )}
      {answer.data?.ledger?.recent === "partial" && (
        <p className="notice" role="status">
          上次同步后站点又记录了 500 条以上的日志，这里只包含其中最新的 500 条；下次同步后完整。
        </p>
      )}
      {answer.data?.source === "site" && (filters.model || filters.token) && (
        <p className="muted">所查范围早于本服务账本的记录，由站点直接查询：模型和令牌须填写完整名称，且不显示合计。</p>
      )}
      {answer.data?.totals && answer.data.totals.entries > 0 && (
        <dl className="log-totals" aria-label={filtered ? "符合条件的合计" : "合计"}>
          {[
            { label: filtered ? "符合条件" : "全部日志", n: answer.data.totals.entries, unit: " 条" },
            { label: "消费请求", n: answer.data.totals.requests, unit: " 次" },
            { label: "输入 tokens", n: answer.data.totals.promptTokens, unit: "" },
            { label: "输出 tokens", n: answer.data.totals.completionTokens, unit: "" },
          ].map(({ label, n, unit }) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd title={formatNumber(n)}>
                {formatCount(n)}
                {unit}
              </dd>
            </div>
          ))}
          <div>
            <dt>花费</dt>
            <dd>{moneyOf(answer.data.totals.quota)}</dd>
          </div>
        </dl>
      )}
      {answer.loading ? (
        <Loading label="使用日志" />
      ) : !answer.data ? (
        <Failed message={answer.message ?? ""} onRetry={refresh} />
      ) : answer.data.items.length === 0 ? (
        input.page > 1 ? (
          // A page past the end (an old link, a shrunken filter): the way back to the last one.
          <Empty>
            第 {input.page} 页没有日志。{" "}
            <Link
              href={hrefWith({
                page: answer.data.total ? String(Math.ceil(answer.data.total / pageSize)) : null,
              })}
              scroll={false}
            >
              {answer.data.total ? `回到最后一页（第 ${Math.ceil(answer.data.total / pageSize)} 页）` : "回到第一页"}
            </Link>
          </Empty>
        ) : (
          <Empty>{filtered ? "没有符合条件的日志" : "还没有使用日志"}</Empty>
        )
      ) : (
        <>
          <TableWrap label="使用日志表格">
            <table className="table log-table">
              <thead>
                <tr>
                  <th>时间（{zone()}）</th>
                  <th>类型</th>
                  <th>模型</th>
                  <th>令牌</th>
                  <th className="num">输入</th>
                  <th className="num">输出</th>
                  <th className="num">花费</th>
                  <th className="num">用时</th>
                </tr>
              </thead>
              <tbody>
                {answer.data.items.map((item, i) => {
                  const key = `${item.createdAt}-${i}`;
                  const expanded = open === key;
                  return (
                    <Fragment key={key}>
                      <tr className="entry" title={item.content}>
                        <td className="c-time">
                          <button
                            type="button"
                            className="link-button"
                            aria-expanded={expanded}
                            aria-controls={`log-detail-${i}`}
                            title="查看详情"
                            onClick={() => setOpen(expanded ? null : key)}
                          >
                            {formatLocal(item.createdAt)}
                          </button>
                        </td>
                        <td className="c-type">
                          <span className={`tag tag-${item.type}`}>{logTypeName(item.type)}</span>
                        </td>
                        <td className="c-model">
                          {item.model || <span className="muted">{item.content.slice(0, 40) || "—"}</span>}
                        </td>
                        <td className="c-token" data-label="令牌">
                          {item.tokenName || "—"}
                        </td>
                        <td className="num c-in" data-label="输入">
                          {item.promptTokens ? formatNumber(item.promptTokens) : "—"}
                        </td>
                        <td className="num c-out" data-label="输出">
                          {item.completionTokens ? formatNumber(item.completionTokens) : "—"}
                        </td>
                        <td className="num c-cost">
                          <Cost item={item} moneyOf={moneyOf} quotaPerUnit={money?.quotaPerUnit} />
                        </td>
                        <td className="num c-dur" data-label="用时">
                          {formatDuration(item.durationMs)}
                          {item.stream ? <span className="muted"> 流</span> : null}
                        </td>
                      </tr>
                      {expanded && (
                        <tr className="detail-row" id={`log-detail-${i}`}>
                          <td colSpan={8}>
                            <LogDetail item={item} money={moneyOf} />
                          </td>
                        </tr>
                      )}
                    </Fragment>
                  );
                })}
              </tbody>
            </table>
          </TableWrap>
          <Pager of={answer.data} />
        </>
      )}
    </section>
  );
}

/** What an entry cost, or what a top-up added (new-api names a top-up's amount only in its text). */
function Cost({
  item,
  moneyOf,
  quotaPerUnit,
}: {
  item: { type: string; quota: number; content: string; check: LogEntry["check"] };
  moneyOf: (quota: number) => string;
  quotaPerUnit: number | undefined;
}) {
  if (item.type === "topup") {
    const added = quotaPerUnit ? topupQuota(item.quota, item.content, quotaPerUnit) : item.quota || null;
    return added ? <span className="gain">+{moneyOf(added)}</span> : <>—</>;
  }
  const off = item.check && item.check.expected !== null && !item.check.ok ? item.check.expected : null;
  return (
    <>
      {item.quota ? moneyOf(item.quota) : "—"}
      {off !== null && (
        <span className="error-text" title={`复算应为 ${moneyOf(off)}`}>
          {" "}
          ≠
        </span>
      )}
    </>
  );
}
