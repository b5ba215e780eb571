"use client";

import Link from "next/link";
import { useId, useState } from "react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { AutoCheckinLine } from "./account-actions";
import { Empty, Failed, Loading, ErrorNote } from "./site-data";

type Account = RouterOutputs["workspace"]["accounts"]["data"]["accounts"][number];

const STATE_TEXT: Record<Account["state"], string> = { ok: "正常", reauth: "需要重新授权", site_removed: "站点已移除" };

export const nameOf = (a: { alias: string | null; displayName: string; username: string; userId: number }) =>
  a.alias || a.displayName || a.username || `用户 ${a.userId}`;

/** A pasted new token for an account whose site refused the saved one; emptied as soon as it is sent. */
export function Reauthorize({ id, onDone }: { id: number; onDone: () => void }) {
  const fieldId = useId();
  const [token, setToken] = useState("");
  const [error, setError] = useState("");
  const update = trpc.workspace.updateAccount.useMutation();
  async function submit() {
    const accessToken = token.trim();
    setToken("");
    setError("");
    if (!accessToken) return;
    try {
      const answer = await update.mutateAsync({ id, accessToken });
      if (answer.success) onDone();
      else setError(answer.message);
    } catch (e) {
      setError(errorMessage(e));
    }
  }
  return (
    <span className="reauth">
      <label htmlFor={fieldId} className="visually-hidden">
        新的访问令牌
      </label>
      <input
        id={fieldId}
        type="password"
        autoComplete="off"
        spellCheck={false}
        placeholder="粘贴新的访问令牌"
        value={token}
        onChange={(e) => setToken(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") void submit();
        }}
      />
      <button
        type="button"
        className="primary"
        disabled={update.isPending || !token.trim()}
        onClick={() => void submit()}
      >
        {update.isPending ? "验证中…" : "重新授权"}
      </button>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}

/** One saved account: what the person named and set on it, and its removal. */
function AccountItem({
  account: a,
  first,
  last,
  onMove,
  onChanged,
}: {
  account: Account;
  first: boolean;
  last: boolean;
  onMove: (dir: -1 | 1) => void;
  onChanged: () => void;
}) {
  const ids = { alias: useId(), tags: useId() };
  const [alias, setAlias] = useState(a.alias ?? "");
  const [tags, setTags] = useState(a.tags.join("，"));
  const [removing, setRemoving] = useState(false);
  const [withLedger, setWithLedger] = useState(false);
  const [message, setMessage] = useState("");
  const update = trpc.workspace.updateAccount.useMutation();
  const remove = trpc.workspace.removeAccount.useMutation();

  async function save(change: {
    alias?: string | null;
    tags?: string[];
    pinned?: boolean;
    excluded?: boolean;
    autoCheckin?: boolean;
  }) {
    setMessage("");
    try {
      const answer = await update.mutateAsync({ id: a.id, ...change });
      if (!answer.success) setMessage(answer.message);
      else onChanged();
    } catch (e) {
      setMessage(errorMessage(e));
    }
  }

  const dirty = alias !== (a.alias ?? "") || tags !== a.tags.join("，");
  return (
    <li className="saved-account" aria-label={nameOf(a)}>
      <div className="saved-head">
        <span className="who">
          <strong>{nameOf(a)}</strong>
          <span className="muted">
            {a.siteName ?? "已移除的站点"} · 用户ID {a.userId}
            {a.username && a.alias ? ` · ${a.username}` : ""}
          </span>
        </span>
        <span className={`tag tag-${a.state === "ok" ? "enabled" : "failed"}`} title={a.stateMessage ?? undefined}>
          {STATE_TEXT[a.state]}
        </span>
      </div>
      {a.autoCheckin && <AutoCheckinLine checkin={a.checkin} />}
      {a.state === "reauth" && (
        <div className="saved-reauth">
          <p className="muted">{a.stateMessage}</p>
          <Reauthorize id={a.id} onDone={onChanged} />
        </div>
      )}
      <div className="saved-fields">
        <div className="field">
          <label htmlFor={ids.alias}>别名</label>
          <input id={ids.alias} value={alias} maxLength={40} onChange={(e) => setAlias(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.tags}>标签</label>
          <input
            id={ids.tags}
            value={tags}
            placeholder="用逗号分隔，例如 工作，备用"
            onChange={(e) => setTags(e.target.value)}
          />
        </div>
        <button
          type="button"
          className="secondary"
          disabled={!dirty || update.isPending}
          onClick={() => void save({ alias: alias.trim() || null, tags: tags.split(/[,，、]/) })}
        >
          保存
        </button>
      </div>
      <div className="saved-actions">
        <label className="inline">
          <input type="checkbox" checked={a.pinned} onChange={(e) => void save({ pinned: e.target.checked })} /> 置顶
        </label>
        <label className="inline">
          <input type="checkbox" checked={a.excluded} onChange={(e) => void save({ excluded: e.target.checked })} />{" "}
          不计入合计
        </label>
        {/* Offered where the site's family has a check-in (one left on elsewhere can still be turned off). */}
        {(a.checkinOffered || a.autoCheckin) && (
          <label className="inline" title="每天在站点的一天里固定的某个时刻自动签到（new-api、Veloera 站点）">
            <input
              type="checkbox"
              checked={a.autoCheckin}
              onChange={(e) => void save({ autoCheckin: e.target.checked })}
            />{" "}
            自动签到
          </label>
        )}
        <button
          type="button"
          className="ghost"
          disabled={first}
          aria-label={`上移 ${nameOf(a)}`}
          onClick={() => onMove(-1)}
        >
          ↑
        </button>
        <button
          type="button"
          className="ghost"
          disabled={last}
          aria-label={`下移 ${nameOf(a)}`}
          onClick={() => onMove(1)}
        >
          ↓
        </button>
        <button type="button" className="ghost" onClick={() => setRemoving(true)}>
          移除
        </button>
      </div>
      {removing && (
        <div className="confirm" role="alertdialog" aria-label={`确认移除 ${nameOf(a)}`}>
          <p>移除后，保存的访问令牌随即删除，服务器不再同步这个账户。</p>
          <label className="inline">
            <input type="checkbox" checked={withLedger} onChange={(e) => setWithLedger(e.target.checked)} />{" "}
            同时删除它的用量账本（不可恢复）
          </label>
          <div className="form-actions">
            <button
              type="button"
              className="danger"
              disabled={remove.isPending}
              onClick={() =>
                void remove
                  .mutateAsync({ id: a.id, ledger: withLedger })
                  .then(onChanged)
                  .catch((e: unknown) => setMessage(errorMessage(e)))
              }
            >
              确认移除
            </button>
            <button type="button" className="secondary" onClick={() => setRemoving(false)}>
              取消
            </button>
          </div>
        </div>
      )}
      <ErrorNote message={message} />
    </li>
  );
}

/** The workspace's accounts as the person keeps them: names, tags, order, what counts in totals. */
export function WorkspaceAccounts() {
  const utils = trpc.useUtils();
  const list = trpc.workspace.accounts.useQuery();
  const update = trpc.workspace.updateAccount.useMutation();
  const [error, setError] = useState("");
  const changed = () => void utils.invalidate();

  if (list.isPending) return <Loading label="工作区账户" />;
  if (list.error) return <Failed message={errorMessage(list.error)} onRetry={() => void list.refetch()} />;
  const accounts = list.data.data.accounts;

  /** Moves an account one place (pinned accounts stay before the others): the list is renumbered. */
  async function move(index: number, dir: -1 | 1) {
    const next = [...accounts];
    const [a, b] = [next[index], next[index + dir]];
    if (!a || !b || a.pinned !== b.pinned) return;
    next[index] = b;
    next[index + dir] = a;
    setError("");
    try {
      for (const [i, x] of next.entries()) {
        if (x.order !== i + 1) await update.mutateAsync({ id: x.id, order: i + 1 });
      }
      changed();
    } catch (e) {
      setError(errorMessage(e));
    }
  }

  return (
    <section className="card" aria-labelledby="ws-accounts-title">
      <div className="card-head">
        <h2 id="ws-accounts-title">账户管理</h2>
        <Link className="button primary" href="/?add=1">
          添加账户
        </Link>
      </div>
      {accounts.length === 0 ? (
        <Empty>工作区还没有账户</Empty>
      ) : (
        <ul className="saved-accounts">
          {accounts.map((a, i) => (
            <AccountItem
              key={`${a.id}:${a.alias ?? ""}:${a.tags.join(",")}`}
              account={a}
              first={i === 0 || accounts[i - 1]?.pinned !== a.pinned}
              last={i === accounts.length - 1 || accounts[i + 1]?.pinned !== a.pinned}
              onMove={(dir) => void move(i, dir)}
              onChanged={changed}
            />
          ))}
        </ul>
      )}
      <ErrorNote message={error} />
    </section>
  );
}
