"use client";

import { useState } from "react";
import { errorMessage } from "@/src/trpc/client";
import { trpc } from "@/src/trpc/react";
import { formatLocal } from "./format";

const ACTIONS: Record<string, string> = {
  signIn: "登录",
  signInFailed: "登录失败",
  password: "设置密码",
  siteAdd: "添加站点",
  siteEdit: "修改站点",
  siteRemove: "移除站点",
  signupMode: "工作区创建方式",
  inviteCreate: "生成邀请码",
};

type Action =
  "signIn" | "signInFailed" | "password" | "siteAdd" | "siteEdit" | "siteRemove" | "signupMode" | "inviteCreate";

/** What the filter offers: every entry, or one kind. */
const FILTERS: Array<{ label: string; actions?: Action[] }> = [
  { label: "全部" },
  { label: "站点变更", actions: ["siteAdd", "siteEdit", "siteRemove"] },
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
export function AuditLog() {
  const [filter, setFilter] = useState(0);
  // The ids each shown page started before: the first page has none.
  const [pages, setPages] = useState<Array<number | undefined>>([undefined]);
  const before = pages[pages.length - 1];
  const audit = trpc.admin.audit.useQuery({ actions: FILTERS[filter]?.actions, before, limit: PAGE });
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
      </div>
      {audit.error && <p className="error">{errorMessage(audit.error)}</p>}
      {entries.length > 0 ? (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th>时间</th>
                <th>操作</th>
                <th>来源</th>
                <th>站点</th>
                <th>变更</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td className="nowrap">{formatLocal(e.at)}</td>
                  <td>
                    {ACTIONS[e.action] ?? e.action}
                    {e.count > 1 ? ` ×${e.count}` : ""}
                  </td>
                  <td>{e.actor}</td>
                  <td>{e.siteId ?? "—"}</td>
                  <td className="audit-change">
                    {e.before ? <code>{JSON.stringify(e.before)}</code> : null}
                    {e.before && e.after ? " → " : null}
                    {e.after ? <code>{JSON.stringify(e.after)}</code> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
