"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useId, useRef, useState, type FormEvent } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { QueryProvider, trpc } from "@/src/trpc/react";

/**
 * Signing in to a workspace (name and password), or creating one (with an invite code when the
 * operator asks for one). The password fields are emptied as soon as they are sent.
 */
export function WorkspaceSignIn(props: { signup: "open" | "invite"; creating: boolean }) {
  return (
    <QueryProvider>
      <Form {...props} />
    </QueryProvider>
  );
}

function Form({ signup, creating }: { signup: "open" | "invite"; creating: boolean }) {
  const router = useRouter();
  const signIn = trpc.workspace.signIn.useMutation();
  const create = trpc.workspace.create.useMutation();
  const ids = { name: useId(), password: useId(), repeat: useId(), invite: useId(), error: useId() };
  const password = useRef<HTMLInputElement>(null);
  const repeat = useRef<HTMLInputElement>(null);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState("");
  // After a right password on a workspace with a second factor: the code is asked, the password
  // kept in memory only until it is sent again.
  const [second, setSecond] = useState<{ name: string; password: string } | null>(null);
  const ids2 = { totp: useId() };

  async function onSecond(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending || !second) return;
    const code = new FormData(event.currentTarget).get("totp");
    setPending(true);
    setError("");
    try {
      const answer = await signIn.mutateAsync({
        ...second,
        totp: typeof code === "string" ? code.trim() : "",
      });
      if (answer.success) {
        setSecond(null);
        router.replace("/");
        router.refresh();
        return;
      }
      setError(answer.message);
    } catch (e) {
      setError(errorMessage(e));
    }
    setPending(false);
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    const form = new FormData(event.currentTarget);
    const text = (key: string) => {
      const value = form.get(key);
      return typeof value === "string" ? value.trim() : "";
    };
    const name = text("name");
    const secret = password.current?.value ?? "";
    const again = repeat.current?.value ?? "";
    const invite = text("invite");
    if (creating && secret !== again) {
      setError("两次输入的密码不一致");
      return;
    }
    if (password.current) password.current.value = "";
    if (repeat.current) repeat.current.value = "";
    setPending(true);
    setError("");
    try {
      const answer = creating
        ? await create.mutateAsync({ name, password: secret, invite: invite || undefined })
        : await signIn.mutateAsync({ name, password: secret });
      if (answer.success) {
        router.replace("/");
        router.refresh();
        return;
      }
      if (!creating && answer.message.startsWith("该工作区已开启两步验证")) {
        setSecond({ name, password: secret });
        setPending(false);
        return;
      }
      // A new workspace refused (a name taken, a password too short): what was typed stays, to correct.
      if (creating) {
        if (password.current) password.current.value = secret;
        if (repeat.current) repeat.current.value = again;
      }
      setError(answer.message);
    } catch (e) {
      setError(errorMessage(e));
    }
    setPending(false);
    password.current?.focus();
  }

  if (second) {
    return (
      <main id="main" tabIndex={-1} className="page narrow">
        <header className="intro">
          <h1>两步验证</h1>
          <p className="muted">
            打开验证器 App，输入「{second.name}」当前的 6 位验证码；手机不在身边时可以输入一个恢复码。
          </p>
        </header>
        <form className="card form" onSubmit={(e) => void onSecond(e)} aria-describedby={ids.error} noValidate>
          <div className="field">
            <label htmlFor={ids2.totp}>验证码或恢复码</label>
            <input
              id={ids2.totp}
              name="totp"
              type="text"
              inputMode="text"
              autoComplete="one-time-code"
              spellCheck={false}
              autoFocus
              required
            />
          </div>
          <p id={ids.error} className="error" role="status" aria-live="polite">
            {error}
          </p>
          <button type="submit" className="primary" disabled={pending} aria-busy={pending}>
            {pending ? "正在验证…" : "验证并登录"}
          </button>
          <button type="button" className="ghost" onClick={() => setSecond(null)}>
            返回
          </button>
        </form>
      </main>
    );
  }

  return (
    <main id="main" tabIndex={-1} className="page narrow">
      <header className="intro">
        <Link className="back" href="/">
          ← 不使用工作区，直接登录站点
        </Link>
        <h1>{creating ? "创建工作区" : "登录工作区"}</h1>
        <p className="muted">
          {"工作区在服务器上保存你的全部账户：任何设备登录后都能看到，访问令牌加密保存、自动续期，" +
            "浏览器关闭时服务器也会按时同步用量。"}
        </p>
      </header>
      <form className="card form" onSubmit={(e) => void onSubmit(e)} aria-describedby={ids.error} noValidate>
        <div className="field">
          <label htmlFor={ids.name}>工作区名称</label>
          <input id={ids.name} name="name" type="text" autoComplete="username" maxLength={40} required />
          {creating && <p className="hint">2 到 40 个字符，登录时使用，不区分大小写。</p>}
        </div>
        <div className="field">
          <label htmlFor={ids.password}>密码</label>
          <input
            id={ids.password}
            ref={password}
            name="password"
            type="password"
            autoComplete={creating ? "new-password" : "current-password"}
            minLength={creating ? 12 : undefined}
            required
          />
          {creating && <p className="hint">至少 12 个字符。忘记密码无法找回，请妥善保存。</p>}
        </div>
        {creating && (
          <div className="field">
            <label htmlFor={ids.repeat}>再输入一次密码</label>
            <input id={ids.repeat} ref={repeat} name="repeat" type="password" autoComplete="new-password" required />
          </div>
        )}
        {creating && signup === "invite" && (
          <div className="field">
            <label htmlFor={ids.invite}>邀请码</label>
            <input id={ids.invite} name="invite" type="text" autoComplete="off" spellCheck={false} required />
            <p className="hint">本站只能凭管理员发放的邀请码创建工作区。</p>
          </div>
        )}
        <p id={ids.error} className="error" role="status" aria-live="polite">
          {error}
        </p>
        <button type="submit" className="primary" disabled={pending} aria-busy={pending}>
          {pending ? (creating ? "正在创建…" : "正在登录…") : creating ? "创建并登录" : "登录"}
        </button>
        <p className="muted switch-link">
          {creating ? (
            <>
              已有工作区？<Link href="/workspace">登录</Link>
            </>
          ) : (
            <>
              还没有工作区？<Link href="/workspace?create=1">创建一个</Link>
            </>
          )}
        </p>
      </form>
    </main>
  );
}
