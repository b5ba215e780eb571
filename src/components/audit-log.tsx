"use client";

import { useState } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { auditSentence } from "./audit-text";
import { formatLocal } from "./format";

type Action =
  | "signIn"
  | "signInFailed"
  | "password"
  | "siteAdd"
  | "siteEdit"
  | "siteRemove"
  | "siteBlock"
  | "siteUnblock"
  | "signupMode"
  | "inviteCreate";

/** What the filter offers: every entry, or one kind. */
const FILTERS: Array<{ label: string; actions?: Action[] }> = [
  { label: "全部" },
  { label: "站点变更", actions: ["siteAdd", "siteEdit", "siteRemove", "siteBlock", "siteUnblock"] },
  { label: "登录", actions: ["signIn"] },
  { label: "登录失败", actions: ["signInFailed"] },
  { label: "设置密码", actions: ["password"] },
  { label: "工作区", actions: ["signupMode", "inviteCreate"] },
];

const PAGE = 50;

/**
 * The audit log, newest first, a page at a time (older pages by the id the last one ended at);
 * failed sign-ins are one row per address and ten minutes, with their count.
 */
export function AuditLog({ sites }: { sites: Array<{ id: number; name: string }> }) {
  const [filter, setFilter] = useState(0);
  const [siteId, setSiteId] = useState<number | undefined>(undefined);
  // The ids each shown page started before: the first page has none.
  const [pages, setPages] = useState<Array<number | undefined>>([undefined]);
  const before = pages[pages.length - 1];
  const audit = trpc.admin.audit.useQuery({ actions: FILTERS[filter]?.actions, siteId, before, limit: PAGE });
  const names = new Map(sites.map((x) => [x.id, x.name]));
  const obj = (v: unknown) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>) : null);
  const entries = audit.data?.data.entries ?? [];
  const next = audit.data?.data.next ?? null;

  return (
    <section className="card" aria-labelledby="audit-title">
      <div className="card-head">
        <h2 id="audit-title">审计日志</h2>
        <label className="field inline-field">
          <span>显示</span>
          <select
            value={filter}
            onChange={(e) => {
              setFilter(Number(e.target.value));
              setPages([undefined]);
            }}
          >
            {FILTERS.map((f, i) => (
              <option key={f.label} value={i}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field inline-field">
          <span>站点</span>
          <select
            value={siteId ?? ""}
            onChange={(e) => {
              setSiteId(e.target.value ? Number(e.target.value) : undefined);
              setPages([undefined]);
            }}
          >
            <option value="">全部站点</option>
            {sites.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      {audit.error && <p className="error">{errorMessage(audit.error)}</p>}
      {entries.length > 0 ? (
        <ol className="audit-list">
          {entries.map((e) => (
            <li key={e.id}>
              <time className="nowrap muted" dateTime={e.at}>
                {formatLocal(e.at)}
              </time>
              <span>{auditSentence({ ...e, before: obj(e.before), after: obj(e.after) }, names)}</span>
            </li>
          ))}
        </ol>
      ) : (
        <p className="state">{audit.isPending ? "正在读取…" : "没有记录"}</p>
      )}
      {(pages.length > 1 || next !== null) && (
        <nav className="pager" aria-label="审计日志分页">
          <button
            type="button"
            className="secondary"
            disabled={pages.length <= 1}
            onClick={() => setPages(pages.slice(0, -1))}
          >
            较新
          </button>
          <span className="muted">第 {pages.length} 页</span>
          <button
            type="button"
            className="secondary"
            disabled={next === null}
            onClick={() => next !== null && setPages([...pages, next])}
          >
            较早
          </button>
        </nav>
      )}
    </section>
  );
}
