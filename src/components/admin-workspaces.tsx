"use client";

import { useId, useState } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { ErrorNote, TableWrap } from "./site-data";
import { formatLocal, formatNumber } from "./format";

const INVITE_STATE = { open: "未使用", used: "已使用", expired: "已过期" } as const;

/** Who may create a workspace here, the invite codes (each shown once), and how many there are. */
export function AdminWorkspaces({ onChanged }: { onChanged: () => void }) {
  const utils = trpc.useUtils();
  const noteId = useId();
  const view = trpc.admin.workspaces.useQuery();
  const setSignup = trpc.admin.setSignup.useMutation();
  const createInvite = trpc.admin.createInvite.useMutation();
  const [note, setNote] = useState("");
  const [code, setCode] = useState<string | null>(null);
  const [error, setError] = useState("");

  async function run(op: () => Promise<void>) {
    setError("");
    try {
      await op();
      await utils.admin.workspaces.invalidate();
      onChanged();
    } catch (e) {
      setError(errorMessage(e));
    }
  }

  const data = view.data?.data;
  return (
    <section className="card" aria-labelledby="admin-ws-title">
      <h2 id="admin-ws-title">工作区</h2>
      {!data ? (
        <p className="state">{view.error ? errorMessage(view.error) : "正在读取…"}</p>
      ) : (
        <>
          <p className="muted">
            共 {formatNumber(data.workspaces)} 个工作区，保存了 {formatNumber(data.accounts)} 个账户
            {data.reauth > 0 ? `，其中 ${formatNumber(data.reauth)} 个需要重新授权` : ""}。
          </p>
          {data.sites.length > 0 && (
            <TableWrap label="邀请码表格">
              <table className="table">
                <caption className="visually-hidden">各站点的工作区账户</caption>
                <thead>
                  <tr>
                    <th scope="col">站点</th>
                    <th scope="col">保存的账户</th>
                    <th scope="col">需要重新授权</th>
                    <th scope="col">同步失败的账本</th>
                  </tr>
                </thead>
                <tbody>
                  {data.sites.map((s) => (
                    <tr key={s.siteId}>
                      <td>{s.siteName ?? `已移除的站点 #${s.siteId}`}</td>
                      <td>{formatNumber(s.accounts)}</td>
                      <td className={s.reauth > 0 ? "failed-text" : undefined}>{formatNumber(s.reauth)}</td>
                      <td className={s.failing > 0 ? "failed-text" : undefined}>{formatNumber(s.failing)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
          <fieldset className="choice">
            <legend>谁可以创建工作区</legend>
            {(["open", "invite"] as const).map((mode) => (
              <label key={mode} className="inline">
                <input
                  type="radio"
                  name="signup"
                  checked={data.mode === mode}
                  disabled={setSignup.isPending}
                  onChange={() => void run(async () => void (await setSignup.mutateAsync({ mode })))}
                />{" "}
                {mode === "open" ? "任何人（每个地址每小时最多 3 个）" : "仅凭邀请码"}
              </label>
            ))}
          </fieldset>
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              void run(async () => {
                const made = await createInvite.mutateAsync({ note: note.trim() || undefined });
                setCode(made.data.code);
                setNote("");
              });
            }}
          >
            <div className="field">
              <label htmlFor={noteId}>备注（可选）</label>
              <input
                id={noteId}
                value={note}
                maxLength={100}
                placeholder="例如 给小王"
                onChange={(e) => setNote(e.target.value)}
              />
            </div>
            <span />
            <button type="submit" className="primary" disabled={createInvite.isPending}>
              生成邀请码
            </button>
          </form>
          {code && (
            <div className="notice" role="status">
              <p>邀请码只显示这一次，30 天内有效，只能用一次：</p>
              <pre className="code">{code}</pre>
            </div>
          )}
          {data.invites.length > 0 && (
            <ul className="device-list" aria-label="邀请码">
              {data.invites.map((i) => (
                <li key={i.id}>
                  <span className="who">
                    <strong>{i.note ?? "（无备注）"}</strong>
                    <span className="muted">
                      生成于 {formatLocal(i.createdAt)} · {INVITE_STATE[i.state]}
                      {i.usedAt ? ` · ${formatLocal(i.usedAt)}` : ` · 有效至 ${formatLocal(i.expiresAt)}`}
                    </span>
                  </span>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      <ErrorNote message={error} />
    </section>
  );
}
