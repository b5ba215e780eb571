"use client";

import { useRouter } from "next/navigation";
import { useId, useRef, useState, type FormEvent } from "react";
import { api, errorMessage, type RouterOutputs } from "@/src/trpc/client";

export type Sites = RouterOutputs["site"]["list"];

/**
 * Signs in to a site account; in a workspace (`workspace`) the account is saved there instead,
 * verified with its site the same way, with an optional alias.
 */
export function SignInForm({ sites, workspace = false }: { sites: Sites; workspace?: boolean }) {
  const router = useRouter();
  const ids = { site: useId(), user: useId(), token: useId(), siteHint: useId(), error: useId(), alias: useId() };
  const tokenRef = useRef<HTMLInputElement>(null);
  const [siteId, setSiteId] = useState(String(sites[0]?.id ?? ""));
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
    // The token field is uncontrolled and emptied at once: the secret never stays in the page.
    if (tokenRef.current) tokenRef.current.value = "";
    setPending(true);
    setError("");
    try {
      const account = {
        userId: /^\d{1,15}$/.test(userId) ? Number(userId) : userId,
        accessToken,
        siteId: Number(siteId),
      };
      const result = workspace
        ? await api.workspace.addAccount.mutate({ ...account, alias: field("alias") || undefined })
        : await api.auth.signIn.mutate(account);
      if (result.success) {
        // From 添加账户 (`/?add=1`) the new account opens on the overview of all accounts.
        router.replace("/");
        router.refresh();
        return;
      }
      setError(result.message);
    } catch (e) {
      setError(errorMessage(e));
    }
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
    </form>
  );
}
