"use client";

import { useRouter } from "next/navigation";
import { useId, useRef, useState, type FormEvent } from "react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { QueryProvider, trpc } from "@/src/trpc/react";
import { siteWords } from "./site-words";

export type Sites = RouterOutputs["site"]["list"];

/**
 * Signs in to a site account; in a workspace (`workspace`) the account is saved there instead,
 * verified with its site the same way, with an optional alias.
 */
export function SignInForm(props: Props) {
  return (
    <QueryProvider>
      <Form {...props} />
    </QueryProvider>
  );
}

type Props = {
  sites: Sites;
  workspace?: boolean;
  /** An account to sign in again (its site and user id, from a 会话已过期 note). */
  initial?: { siteId?: number; userId?: number };
};

function Form({ sites, workspace = false, initial }: Props) {
  const router = useRouter();
  const addAccount = trpc.workspace.addAccount.useMutation();
  const signIn = trpc.auth.signIn.useMutation();
  const ids = { site: useId(), user: useId(), token: useId(), siteHint: useId(), error: useId(), alias: useId() };
  const tokenRef = useRef<HTMLInputElement>(null);
  const userRef = useRef<HTMLInputElement>(null);
  const known = sites.find((s) => s.id === initial?.siteId);
  const [siteId, setSiteId] = useState(String(known?.id ?? sites[0]?.id ?? ""));
  const [showToken, setShowToken] = useState(false);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState("");
  const selected = sites.find((s) => String(s.id) === siteId);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    const form = new FormData(event.currentTarget);
    const field = (name: string) => {
      const value = form.get(name);
      return typeof value === "string" ? value.trim() : "";
    };
    const userId = field("userId");
    const accessToken = field("accessToken");
    // Said before anything is sent, in the sign-in's own words.
    if (!siteId || !userId || !accessToken) {
      setError("请填写完整信息：站点、用户ID 和访问令牌");
      (userId ? tokenRef : userRef).current?.focus();
      return;
    }
    // Said before any site is asked: the sites number their users.
    if (userId && !/^\d{1,15}$/.test(userId)) {
      setError("用户ID应为数字：在站点的个人设置页可以看到（如 1、42）");
      userRef.current?.focus();
      return;
    }
    setPending(true);
    setError("");
    try {
      const account = {
        userId: /^\d{1,15}$/.test(userId) ? Number(userId) : userId,
        accessToken,
        siteId: Number(siteId),
      };
      const result = workspace
        ? await addAccount.mutateAsync({ ...account, alias: field("alias") || undefined })
        : await signIn.mutateAsync(account);
      if (result.success) {
        // From 添加账户 (`/?add=1`) the new account opens on the overview of all accounts.
        router.replace("/");
        router.refresh();
        return;
      }
      setError(siteWords(result.message));
    } catch (e) {
      setError(errorMessage(e));
    }
    // The token stays in its field (hidden) so a wrong user id can be corrected without pasting it again.
    setPending(false);
    tokenRef.current?.focus();
  }

  return (
    <form
      className="card form"
      method="post"
      onSubmit={(e) => void onSubmit(e)}
      aria-describedby={ids.error}
      noValidate
    >
      <div className="field">
        <label htmlFor={ids.site}>站点</label>
        <select
          id={ids.site}
          name="siteId"
          value={siteId}
          onChange={(e) => setSiteId(e.target.value)}
          aria-describedby={ids.siteHint}
          required
        >
          {sites.map((s) => (
            <option key={s.id} value={s.id} title={s.url}>
              {s.name}
            </option>
          ))}
        </select>
        <p className="hint" id={ids.siteHint}>
          {selected?.url}
        </p>
      </div>

      <div className="field">
        <label htmlFor={ids.user}>用户ID</label>
        <input
          id={ids.user}
          ref={userRef}
          defaultValue={initial?.userId}
          name="userId"
          type="text"
          inputMode="numeric"
          pattern="[0-9]*"
          autoComplete="username"
          placeholder="例如 1"
          required
        />
      </div>

      <div className="field">
        <label htmlFor={ids.token}>访问令牌</label>
        <div className="with-button">
          <input
            id={ids.token}
            ref={tokenRef}
            name="accessToken"
            type={showToken ? "text" : "password"}
            autoComplete="off"
            spellCheck={false}
            placeholder="个人设置中的系统访问令牌"
            required
          />
          <button
            type="button"
            className="ghost"
            aria-pressed={showToken}
            aria-controls={ids.token}
            onClick={() => setShowToken((v) => !v)}
          >
            {showToken ? "隐藏" : "显示"}
          </button>
        </div>
      </div>

      {workspace && (
        <div className="field">
          <label htmlFor={ids.alias}>别名（可选）</label>
          <input id={ids.alias} name="alias" type="text" maxLength={40} autoComplete="off" placeholder="例如 主力号" />
        </div>
      )}

      <p id={ids.error} className="error" role="status" aria-live="polite">
        {error}
      </p>

      <button type="submit" className="primary" disabled={pending} aria-busy={pending}>
        {pending ? (workspace ? "正在验证…" : "登录中…") : workspace ? "验证并保存" : "登录"}
      </button>

      <details className="help">
        <summary>在哪里找到用户ID和访问令牌？</summary>
        <ul>
          <li>
            <strong>new-api、Veloera</strong>：登录站点后打开「个人设置」，用户ID显示在用户名旁（ID:
            数字）；在「安全设置」的 「系统访问令牌」点「生成令牌」并复制。
          </li>
          <li>
            <strong>one-api</strong>：「个人设置」页的「生成系统访问令牌」；用户ID在站点的个人设置页或由管理员告知。
          </li>
          <li>
            <strong>one-hub、done-hub</strong>：「个人设置」中的「访问令牌」（Access Token），用户ID在同页的账户信息里。
          </li>
          <li>系统访问令牌不是调用模型用的 sk- 开头的 API 密钥；在站点重新生成后，旧令牌立即失效。</li>
        </ul>
      </details>
    </form>
  );
}
