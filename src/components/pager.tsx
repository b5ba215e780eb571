"use client";

import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { formatNumber } from "./format";

/** The same view with other query parameters (a shareable URL for every page and filter). */
export function useHrefWith() {
  const params = useSearchParams();
  return (changes: Record<string, string | number | null>) => {
    const next = new URLSearchParams(params.toString());
    for (const [key, value] of Object.entries(changes)) {
      if (value === null || value === "") next.delete(key);
      else next.set(key, String(value));
    }
    return `?${next.toString()}`;
  };
}

/**
 * A view setting kept in the page's address, so a reload, back and forward or a shared link show
 * the same view; changed in place (history.replaceState, which useSearchParams follows), with no
 * request to the server. Its default is not written.
 */
export function useQueryState(key: string, fallback: string): [string, (value: string) => void] {
  const params = useSearchParams();
  const set = (value: string) => {
    const next = new URLSearchParams(window.location.search);
    if (value === fallback || value === "") next.delete(key);
    else next.set(key, value);
    const query = next.toString();
    window.history.replaceState(null, "", query ? `?${query}` : window.location.pathname);
  };
  return [params.get(key) ?? fallback, set];
}

/** The `page` of the query string: a positive integer, else 1. */
export function pageParam(raw: string | null): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** Paging of a page answer: back, where we are, forward. */
export function Pager({
  of: { page, pageSize, total, hasMore, items },
}: {
  of: { page: number; pageSize: number; total: number | null; hasMore: boolean; items: readonly unknown[] };
}) {
  const hrefWith = useHrefWith();
  const shown = items.length;
  const first = (page - 1) * pageSize + 1;
  const pages = total === null ? null : Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav className="pager" aria-label="分页">
      {page > 1 ? (
        <Link className="button secondary" href={hrefWith({ page: page - 1 })} scroll={false}>
          上一页
        </Link>
      ) : (
        <span className="button secondary disabled" aria-disabled="true">
          上一页
        </span>
      )}
      <span className="muted">
        第 {page}
        {pages !== null ? ` / ${formatNumber(pages)}` : ""} 页
        {shown > 0 ? ` · 第 ${formatNumber(first)}–${formatNumber(first + shown - 1)} 条` : ""}
        {total !== null ? ` · 共 ${formatNumber(total)} 条` : ""}
      </span>
      {hasMore ? (
        <Link className="button secondary" href={hrefWith({ page: page + 1 })} scroll={false}>
          下一页
        </Link>
      ) : (
        <span className="button secondary disabled" aria-disabled="true">
          下一页
        </span>
      )}
    </nav>
  );
}
