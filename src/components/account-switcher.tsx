"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { errorMessage, isUnauthorized } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { rememberNames, rememberedName } from "./account-names";

/**
 * The accounts of this browser: which is active, switch to another without typing anything, add
 * one, sign one or all out. Accounts whose sessions ended elsewhere are named once.
 */
export function AccountSwitcher() {
  const router = useRouter();
  const utils = trpc.useUtils();
  const list = trpc.account.list.useQuery();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState("");
  const menu = useRef<HTMLDetailsElement>(null);

  /** Runs a change; `remain` says whether an account is left (else the page becomes the sign-in page). */
  async function run(action: () => Promise<{ remain: boolean }>) {
    setBusy(true);
    setMessage("");
    try {
      const { remain } = await action();
      if (menu.current) menu.current.open = false;
      // Every view of the page belongs to the account now active; with none left, nothing to fetch.
      if (remain) await utils.invalidate();
      router.refresh();
    } catch (e) {
      if (isUnauthorized(e)) router.refresh();
      else setMessage(errorMessage(e));
    }
    setBusy(false);
  }
  const switchTo = trpc.account.switch.useMutation();
  const signOut = trpc.account.signOut.useMutation();
  const signOutAll = trpc.account.signOutAll.useMutation();

  const accounts = list.data?.accounts ?? [];
  const dropped = list.data?.dropped ?? [];
  const active = accounts.find((a) => a.active);
  // A workspace's accounts are removed in its settings, not signed out here.
  const saved = accounts.some((a) => a.saved);
  const label = (a: (typeof accounts)[number]) =>
    `${a.site?.name ?? "已移除的站点"} · ${a.saved?.alias || a.displayName || a.username || `用户 ${a.userId}`}`;
  useEffect(() => {
    rememberNames(accounts.flatMap((a) => (a.site ? [{ siteId: a.site.id, userId: a.userId, name: label(a) }] : [])));
  });

  return (
    <section className="switcher" aria-label="账户切换">
      {dropped.length > 0 && (
        <div className="note" role="status">
          {dropped.map((d) => (
            <p key={`${d.siteId}:${d.userId}`}>
              {rememberedName(d.siteId, d.userId) ?? `${d.siteName ?? `站点 ${d.siteId}`} · 用户ID ${d.userId}`}{" "}
              的会话已过期或已在别处退出，已从本浏览器移除。{" "}
              {d.siteName && <Link href={`/?add=1&site=${d.siteId}&user=${d.userId}`}>重新登录这个账户</Link>}
            </p>
          ))}
        </div>
      )}
      <details
        className="menu"
        ref={menu}
        onKeyDown={(e) => {
          // Esc closes the menu and gives the focus back to what opened it.
          if (e.key === "Escape" && menu.current?.open) {
            menu.current.open = false;
            menu.current.querySelector("summary")?.focus();
          }
        }}
      >
        <summary>
          <span className="muted">当前账户</span> {active ? label(active) : "…"}
          <span className="muted"> · 共 {accounts.length} 个</span>
        </summary>
        <ul aria-label={saved ? "工作区中的账户" : "本浏览器中的账户"}>
          {accounts.map((a) => (
            <li key={a.key} className={a.active ? "current" : undefined}>
              <span>
                <strong>{label(a)}</strong>
                <span className="muted">用户ID {a.userId}</span>
              </span>
              <span className="menu-actions">
                {a.active ? (
                  <span className="tag tag-enabled">当前</span>
                ) : (
                  <button
                    type="button"
                    className="secondary"
                    disabled={busy}
                    onClick={() => void run(async () => (await switchTo.mutateAsync({ key: a.key }), { remain: true }))}
                  >
                    切换
                  </button>
                )}
                {!saved && (
                  <button
                    type="button"
                    className="ghost"
                    disabled={busy}
                    aria-label={`退出 ${label(a)}`}
                    onClick={() =>
                      void run(async () => ({ remain: (await signOut.mutateAsync({ key: a.key })).remaining > 0 }))
                    }
                  >
                    退出
                  </button>
                )}
              </span>
            </li>
          ))}
        </ul>
        <div className="menu-foot">
          <Link className="button primary" href="/?add=1">
            添加账户
          </Link>
          {saved ? (
            <Link className="button secondary" href="/?tab=workspace">
              管理账户
            </Link>
          ) : (
            <button
              type="button"
              className="secondary"
              disabled={busy}
              onClick={() => void run(async () => (await signOutAll.mutateAsync(), { remain: false }))}
            >
              全部退出
            </button>
          )}
        </div>
      </details>
      <span className="error" role="status" aria-live="polite">
        {message}
      </span>
    </section>
  );
}
