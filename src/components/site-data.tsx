"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { errorMessage, isUnauthorized, type RouterInputs, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { formatAge, formatLocal } from "./format";
import { siteWords } from "./site-words";

type Answer<T> = { success: true; data: T } | { success: false; message: string };
type QueryLike<T> = { data?: Answer<T>; error: unknown; isPending: boolean; isFetching: boolean };

/** One site-data answer as a state to render: loading, a message, or the data. */
export function useAnswer<T>(query: QueryLike<T>): { data?: T; message?: string; loading: boolean } {
  const router = useRouter();
  const expired = query.error !== null && isUnauthorized(query.error);
  useEffect(() => {
    // The session ended elsewhere: the page shows the sign-in form again.
    if (expired) router.refresh();
  }, [expired, router]);
  if (query.isPending) return { loading: true };
  if (query.error) return { loading: false, message: expired ? "登录已过期，请重新登录" : errorMessage(query.error) };
  if (query.data && !query.data.success) return { loading: false, message: query.data.message };
  return { loading: false, data: query.data?.data };
}

/** A refresh that reads the site now (`run`), falling back to a plain refetch if that fails. */
function useRefreshing(run: () => Promise<unknown>, fallback: () => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const refresh = async () => {
    setBusy(true);
    try {
      await run();
    } catch {
      await fallback();
    }
    setBusy(false);
  };
  return [busy, () => void refresh()] as const;
}

type Reads = "summary" | "logs" | "tokens" | "topups";
type DataOf<P extends Reads> = Extract<RouterOutputs["account"][P], { success: true }>["data"];

/**
 * One live read of the active account's site (the summary, the log, the tokens, the top-ups): its
 * answer as a state to render, and a refresh that reads the site now into the same cache entry.
 */
export function useSiteData<P extends Reads>(name: P, input: RouterInputs["account"][P]) {
  // The four reads share one shape, but tRPC's hooks cannot be indexed by a union: one cast here.
  const read = trpc.account[name] as unknown as {
    useQuery(input: unknown): QueryLike<DataOf<P>> & { refetch(): Promise<unknown> };
  };
  const utils = trpc.useUtils();
  const cached = utils.account[name] as unknown as { setData(input: unknown, data: unknown): void };
  const client = utils.client.account[name] as unknown as { query(input: unknown): Promise<unknown> };
  const query = read.useQuery(input);
  const answer = useAnswer(query);
  const [refreshing, refresh] = useRefreshing(
    async () => cached.setData(input, await client.query(Object.assign({}, input, { refresh: true }))),
    () => query.refetch(),
  );
  return { answer, refreshing, refresh };
}

/** One figure of a stats row: what it is, the figure, and a line under it. */
export function Stat({ label, value, note }: { label: string; value: string; note?: React.ReactNode }) {
  return (
    <div className="stat">
      <span className="stat-label">{label}</span>
      <span className="stat-value">{value}</span>
      <span className="muted">{note}</span>
    </div>
  );
}

export function Loading({ label }: { label: string }) {
  return (
    <p className="state" role="status">
      正在从站点读取{label}…
    </p>
  );
}

export function Failed({ message, onRetry }: { message: string; onRetry: () => void }) {
  return (
    <div className="state failed" role="alert">
      <span>{siteWords(message)}</span>
      <button type="button" className="secondary" onClick={onRetry}>
        重试
      </button>
    </div>
  );
}

/** A table that may scroll sideways: a named region the keyboard can reach and scroll. */
export function TableWrap({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export function Empty({ children }: { children: React.ReactNode }) {
  return <p className="state">{children}</p>;
}

/** When the data was read from the site, kept current, and a button to read it again now. */
export function Freshness({
  fetchedAt,
  busy,
  onRefresh,
  cacheSeconds,
}: {
  fetchedAt: string;
  busy: boolean;
  onRefresh: () => void;
  cacheSeconds: number;
}) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 5_000);
    return () => clearInterval(timer);
  }, []);
  const stale = now - Date.parse(fetchedAt) > cacheSeconds * 1000;
  return (
    <div className="freshness">
      <span className={stale ? "stale" : "muted"} title={formatLocal(fetchedAt)}>
        {busy ? "正在刷新…" : `数据更新于 ${formatAge(fetchedAt, now)}`}
      </span>
      <button type="button" className="ghost" onClick={onRefresh} disabled={busy}>
        刷新
      </button>
    </div>
  );
}

/** A refusal or failure in words, announced to screen readers; nothing when there is none. */
export function ErrorNote({ message }: { message: string }) {
  if (!message) return null;
  return (
    <p className="error" role="alert">
      {siteWords(message)}
    </p>
  );
}
