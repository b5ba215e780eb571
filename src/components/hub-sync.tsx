"use client";

import { useId, useState, type FormEvent } from "react";
import { checked, errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { formatLocal } from "./format";
import { Empty, ErrorNote, Failed, Loading } from "./site-data";

type Status = RouterOutputs["workspace"]["hubSync"]["data"];
type Run = Status["runs"][number];

const RESULT: Record<Run["items"][number]["result"], string> = {
  added: "新增",
  changed: "已更新",
  removed: "已删除",
  kept: "保留",
  refused: "未通过验证",
  skipped: "未同步",
};

/** One write of the extension's file: what became of each account, or why the file was refused. */
function RunEntry({ run }: { run: Run }) {
  const counts = Object.entries(RESULT)
    .map(([result, label]) => [label, run.items.filter((i) => i.result === result).length] as const)
    .filter(([, n]) => n > 0)
    .map(([label, n]) => `${label} ${n}`);
  return (
    <li>
      <span className="who">
        <strong>{formatLocal(run.at)}</strong>
        <span className={run.message ? "error-text" : "muted"}>
          {run.message ?? (counts.length > 0 ? counts.join(" · ") : "无变化")}
        </span>
      </span>
      {run.items.length > 0 && (
        <ul className="hub-items">
          {run.items.map((item, i) => (
            <li key={i}>
              <span className={`hub-badge hub-${item.result}`}>{RESULT[item.result]}</span> {item.name}
              {item.message ? <span className="muted">：{item.message}</span> : null}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** A value the person copies into the extension, with its copy button. */
function CopyLine({ label, value }: { label: string; value: string }) {
  return (
    <div className="copy-line">
      <span className="muted">{label}</span>
      <code>{value}</code>
      <button type="button" className="ghost" onClick={() => void navigator.clipboard?.writeText(value)}>
        复制
      </button>
    </div>
  );
}

/**
 * All API Hub 同步 of the workspace tab: what to enter in the extension's WebDAV settings (the
 * address, any user name, a sync credential made here and shown once), what the extension's
 * deletions do here, the passphrase of its encrypted files, and what its last writes did.
 */
export function HubSync() {
  const ids = { deletes: useId(), passphrase: useId(), password: useId() };
  const utils = trpc.useUtils();
  const status = trpc.workspace.hubSync.useQuery();
  const update = trpc.workspace.updateHubSync.useMutation();
  const create = trpc.workspace.createApiToken.useMutation();
  const [credential, setCredential] = useState<string | null>(null);
  // The sync file carries every account's token: the credential is made with the workspace password.
  const [asking, setAsking] = useState(false);
  const [password, setPassword] = useState("");
  const [passphrase, setPassphrase] = useState("");
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);

  if (status.isPending) return <Loading label="All API Hub 同步" />;
  if (status.error) return <Failed message={errorMessage(status.error)} onRetry={() => void status.refetch()} />;
  const data = status.data.data;

  async function save(change: Parameters<typeof update.mutateAsync>[0], done: string) {
    setNote(null);
    try {
      checked(await update.mutateAsync(change));
      setNote({ ok: true, text: done });
      await utils.workspace.hubSync.invalidate();
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  async function onCredential(event: FormEvent) {
    event.preventDefault();
    setNote(null);
    try {
      const made = await create.mutateAsync({
        name: `All API Hub ${new Date().toLocaleDateString("zh-CN")}`,
        access: "sync",
        password,
      });
      setCredential(made.data.token);
      setAsking(false);
      setPassword("");
      await utils.workspace.apiTokens.invalidate();
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  function onPassphrase(event: FormEvent) {
    event.preventDefault();
    void save({ passphrase }, "加密密码已保存").then(() => setPassphrase(""));
  }

  return (
    <section className="card" aria-labelledby="ws-hub-title">
      <h2 id="ws-hub-title">All API Hub 同步</h2>
      <p className="muted">
        在 All API Hub 扩展的「导入/导出 → WebDAV」中填写下面的地址和同步凭据，扩展每次同步都会与本工作区双向合并账户：
        扩展里新增或更换令牌的账户经站点验证后保存到这里，这里的新增、续期、删除和签到也会同步回扩展。
        标签、备注、书签和扩展设置原样保留。
      </p>
      <CopyLine label="WebDAV 地址" value={data.address} />
      <p className="muted">用户名任意（例如 sync），密码填写同步凭据。同步凭据只能用于同步，可在「API 令牌」中撤销。</p>
      {credential ? (
        <div className="notice" role="status">
          <p>同步凭据只显示这一次，请现在复制到扩展的「密码」中：</p>
          <pre className="code">{credential}</pre>
          <div className="form-actions">
            <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(credential)}>
              复制
            </button>
            <button type="button" className="ghost" onClick={() => setCredential(null)}>
              我已保存
            </button>
          </div>
        </div>
      ) : asking ? (
        <form className="form" onSubmit={(e) => void onCredential(e)} aria-label="创建同步凭据">
          <p className="muted">同步文件含全部账户的访问令牌，请输入工作区密码确认（错 5 次本设备退出登录）。</p>
          <div className="field">
            <label htmlFor={ids.password}>工作区密码</label>
            <input
              id={ids.password}
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </div>
          <div className="form-actions">
            <button type="submit" className="secondary" disabled={create.isPending || password === ""}>
              创建
            </button>
            <button
              type="button"
              className="ghost"
              onClick={() => {
                setAsking(false);
                setPassword("");
              }}
            >
              取消
            </button>
          </div>
        </form>
      ) : (
        <div className="form-actions">
          <button type="button" className="secondary" onClick={() => setAsking(true)}>
            创建同步凭据
          </button>
        </div>
      )}

      <p className="muted" aria-label="同步状态">
        {data.fileAt
          ? `扩展上次写入：${formatLocal(data.fileAt)}${data.encrypted ? "（已加密）" : ""}`
          : "扩展尚未写入过"}
        {data.readAt ? ` · 上次读取：${formatLocal(data.readAt)}` : ""}
      </p>

      <div className="form">
        <div className="field">
          <label htmlFor={ids.deletes}>扩展中删除的账户</label>
          <select
            id={ids.deletes}
            value={data.deletes}
            disabled={update.isPending}
            onChange={(e) =>
              void save({ deletes: e.target.value === "keep" ? "keep" : "remove" }, "已保存删除的处理方式")
            }
          >
            <option value="remove">在此也删除</option>
            <option value="keep">在此保留（列在同步结果中）</option>
          </select>
        </div>
      </div>
      <form className="inline-form" aria-label="加密密码" onSubmit={onPassphrase}>
        <div className="field">
          <label htmlFor={ids.passphrase}>备份加密密码</label>
          <input
            id={ids.passphrase}
            type="password"
            autoComplete="off"
            value={passphrase}
            placeholder={data.hasPassphrase ? "已保存（输入新密码以更换）" : "扩展开启了「备份加密」时填写"}
            onChange={(e) => setPassphrase(e.target.value)}
          />
        </div>
        <button type="submit" className="primary" disabled={update.isPending || !passphrase.trim()}>
          保存密码
        </button>
        {data.hasPassphrase && (
          <button
            type="button"
            className="ghost"
            disabled={update.isPending}
            onClick={() => void save({ passphrase: null }, "已删除保存的加密密码")}
          >
            删除密码
          </button>
        )}
      </form>
      {note?.ok ? (
        <p className="notice" role="status">
          {note.text}
        </p>
      ) : (
        <ErrorNote message={note?.text ?? ""} />
      )}

      {data.unsynced.length > 0 && (
        <>
          <h3>未同步的账户</h3>
          <ul className="device-list" aria-label="未同步的账户">
            {data.unsynced.map((u, i) => (
              <li key={i}>
                <span className="who">
                  <strong>{u.name}</strong>
                  <span className="muted">{u.message}</span>
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>最近同步</h3>
      {data.runs.length === 0 ? (
        <Empty>扩展还没有同步过。</Empty>
      ) : (
        <ul className="device-list hub-runs" aria-label="最近同步">
          {data.runs.map((run) => (
            <RunEntry key={run.at} run={run} />
          ))}
        </ul>
      )}
    </section>
  );
}
