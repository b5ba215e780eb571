"use client";

import { useRouter } from "next/navigation";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { formatAge, formatLocal } from "./format";
import { ErrorNote, Failed, Loading } from "./site-data";
import { WorkspaceAccounts } from "./workspace-accounts";
import { WorkspaceSites } from "./workspace-sites";
import { HubSync } from "./hub-sync";
import { WorkspaceBackup } from "./workspace-backup";
import { WorkspaceTotp } from "./workspace-totp";
import { WorkspaceTransfer } from "./workspace-transfer";

/** The devices signed in to the workspace: each revocable, or all at once. */
function Devices() {
  const router = useRouter();
  const utils = trpc.useUtils();
  const list = trpc.workspace.devices.useQuery();
  const revoke = trpc.workspace.revokeDevice.useMutation();
  const everywhere = trpc.workspace.signOutEverywhere.useMutation();
  const [error, setError] = useState("");

  if (list.isPending) return <Loading label="设备" />;
  if (list.error) return <Failed message={errorMessage(list.error)} onRetry={() => void list.refetch()} />;
  return (
    <section className="card" aria-labelledby="ws-devices-title">
      <div className="card-head">
        <h2 id="ws-devices-title">已登录的设备</h2>
        <button
          type="button"
          className="secondary"
          disabled={everywhere.isPending}
          onClick={() =>
            void everywhere
              .mutateAsync()
              .then(() => {
                router.replace("/workspace");
                router.refresh();
              })
              .catch((e: unknown) => setError(errorMessage(e)))
          }
        >
          在所有设备上退出并撤销 API 令牌
        </button>
      </div>
      <ul className="device-list">
        {list.data.data.devices.map((d) => (
          <li key={d.id}>
            <span className="who">
              <strong>{d.device}</strong>
              <span className="muted">
                {d.current ? "本设备 · " : ""}最近使用 {formatAge(d.lastUsedAt)} · 登录于 {formatLocal(d.createdAt)}
                {d.address ? ` · ${d.address}` : ""}
              </span>
            </span>
            {!d.current && (
              <button
                type="button"
                className="ghost"
                disabled={revoke.isPending}
                onClick={() =>
                  void revoke
                    .mutateAsync({ id: d.id })
                    .then(() => utils.workspace.devices.invalidate())
                    .catch((e: unknown) => setError(errorMessage(e)))
                }
              >
                退出此设备
              </button>
            )}
          </li>
        ))}
      </ul>
      <p className="muted">
        设备闲置 30 天后自动退出；登录最长保持 90 天。修改密码或在所有设备上退出时，其他设备和全部 API 令牌一并失效。
      </p>
      <ErrorNote message={error} />
    </section>
  );
}

/** API tokens for other programs: made here, shown once, revocable. */
function ApiTokens() {
  const utils = trpc.useUtils();
  const ids = { name: useId(), access: useId() };
  const list = trpc.workspace.apiTokens.useQuery();
  const create = trpc.workspace.createApiToken.useMutation();
  const revoke = trpc.workspace.revokeApiToken.useMutation();
  const [name, setName] = useState("");
  const [access, setAccess] = useState<"read" | "write">("read");
  const [shown, setShown] = useState<string | null>(null);
  const [error, setError] = useState("");
  const [mcpAddress, setMcpAddress] = useState("/api/mcp");
  // The page's own origin, known in the browser only (the server's render says the path).
  useEffect(() => setMcpAddress(`${window.location.origin}/api/mcp`), []);

  async function onCreate(event: FormEvent) {
    event.preventDefault();
    setError("");
    try {
      const made = await create.mutateAsync({ name, access });
      setShown(made.data.token);
      setName("");
      await utils.workspace.apiTokens.invalidate();
    } catch (e) {
      setError(errorMessage(e));
    }
  }

  return (
    <section className="card" aria-labelledby="ws-tokens-title">
      <h2 id="ws-tokens-title">API 令牌</h2>
      <p className="muted">
        供脚本和其他程序读取工作区的账户：作为 <code>Authorization: Bearer</code> 发送，账户路由加{" "}
        <code>?account=</code> 选择账户（见 /api/openapi.json）。只读令牌不能做任何修改。
      </p>
      <p className="muted">
        智能体（Claude Code、Cursor、Cherry Studio 等 MCP 客户端）：MCP 地址 <code>{mcpAddress}</code>，请求头{" "}
        <code>Authorization: Bearer 令牌</code>；可以问「哪个账户用 claude-sonnet-4 最便宜」，读写令牌还能签到。
      </p>
      {shown && (
        <div className="notice" role="status">
          <p>新令牌只显示这一次，请现在复制保存：</p>
          <pre className="code">{shown}</pre>
          <div className="form-actions">
            <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(shown)}>
              复制
            </button>
            <button type="button" className="ghost" onClick={() => setShown(null)}>
              我已保存
            </button>
          </div>
        </div>
      )}
      <form className="inline-form" onSubmit={(e) => void onCreate(e)}>
        <div className="field">
          <label htmlFor={ids.name}>名称</label>
          <input
            id={ids.name}
            value={name}
            maxLength={40}
            placeholder="例如 报表脚本"
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={ids.access}>权限</label>
          <select id={ids.access} value={access} onChange={(e) => setAccess(e.target.value as "read" | "write")}>
            <option value="read">只读</option>
            <option value="write">读写</option>
          </select>
        </div>
        <button type="submit" className="primary" disabled={create.isPending || !name.trim()}>
          创建令牌
        </button>
      </form>
      {list.data && list.data.data.tokens.length > 0 && (
        <ul className="device-list">
          {list.data.data.tokens.map((t) => (
            <li key={t.id}>
              <span className="who">
                <strong>{t.name}</strong>
                <span className="muted">
                  {t.access === "read" ? "只读" : t.access === "sync" ? "同步凭据（WebDAV）" : "读写"} · 创建于{" "}
                  {formatLocal(t.createdAt)} · 最近使用 {formatAge(t.lastUsedAt)}
                </span>
              </span>
              <button
                type="button"
                className="ghost"
                disabled={revoke.isPending}
                onClick={() =>
                  void revoke
                    .mutateAsync({ id: t.id })
                    .then(() => utils.workspace.apiTokens.invalidate())
                    .catch((e: unknown) => setError(errorMessage(e)))
                }
              >
                撤销
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote message={error} />
    </section>
  );
}

/** The workspace's password; the other devices are signed out when it changes. */
function ChangePassword() {
  const ids = { current: useId(), next: useId(), repeat: useId() };
  const current = useRef<HTMLInputElement>(null);
  const next = useRef<HTMLInputElement>(null);
  const repeat = useRef<HTMLInputElement>(null);
  const change = trpc.workspace.changePassword.useMutation();
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    const [c, n, r] = [current.current?.value ?? "", next.current?.value ?? "", repeat.current?.value ?? ""];
    for (const field of [current, next, repeat]) if (field.current) field.current.value = "";
    if (n !== r) {
      setMessage({ ok: false, text: "两次输入的新密码不一致" });
      return;
    }
    try {
      const { ended } = await change.mutateAsync({ current: c, next: n });
      setMessage({ ok: true, text: `密码已修改，其他 ${ended} 台设备已退出` });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  }

  return (
    <section className="card" aria-labelledby="ws-password-title">
      <h2 id="ws-password-title">修改密码</h2>
      <form className="form" onSubmit={(e) => void onSubmit(e)}>
        <div className="field">
          <label htmlFor={ids.current}>当前密码</label>
          <input id={ids.current} ref={current} type="password" autoComplete="current-password" required />
        </div>
        <div className="field">
          <label htmlFor={ids.next}>新密码</label>
          <input id={ids.next} ref={next} type="password" autoComplete="new-password" minLength={12} required />
          <p className="hint">至少 12 个字符；修改后其他设备需要重新登录，全部 API 令牌失效。</p>
        </div>
        <div className="field">
          <label htmlFor={ids.repeat}>再输入一次新密码</label>
          <input id={ids.repeat} ref={repeat} type="password" autoComplete="new-password" required />
        </div>
        <button type="submit" className="primary" disabled={change.isPending}>
          修改密码
        </button>
        {message && (
          <p className={message.ok ? "notice" : "error"} role={message.ok ? "status" : "alert"}>
            {message.text}
          </p>
        )}
      </form>
    </section>
  );
}

/** The workspace tab: its accounts as the person keeps them, its devices, API tokens and password. */
export function WorkspaceSettings() {
  return (
    <>
      <WorkspaceAccounts />
      <WorkspaceSites />
      <WorkspaceTransfer />
      <WorkspaceBackup />
      <HubSync />
      <Devices />
      <ApiTokens />
      <ChangePassword />
      <WorkspaceTotp />
    </>
  );
}
