"use client";

import { useRouter } from "next/navigation";
import { useId, useRef, useState, type FormEvent } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { QueryProvider, trpc } from "@/src/trpc/react";

/** The operator's sign-in: one password field; the password is cleared from the page at once. */
export function AdminSignIn() {
  return (
    <QueryProvider>
      <Form />
    </QueryProvider>
  );
}

function Form() {
  const router = useRouter();
  const ids = { password: useId(), error: useId() };
  const ref = useRef<HTMLInputElement>(null);
  const signIn = trpc.admin.signIn.useMutation();
  // From the click until the page moves on or says why not.
  const [pending, setPending] = useState(false);
  const [error, setError] = useState("");

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    const password = ref.current?.value ?? "";
    if (ref.current) ref.current.value = "";
    setPending(true);
    setError("");
    try {
      const result = await signIn.mutateAsync({ password });
      if (result.success) {
        router.refresh();
        return;
      }
      setError(result.message);
      setPending(false);
      ref.current?.focus();
    } catch (e) {
      setError(errorMessage(e));
      setPending(false);
      ref.current?.focus();
    }
  }

  return (
    <main id="main" tabIndex={-1} className="page narrow">
      <form className="card form" onSubmit={(e) => void onSubmit(e)} aria-labelledby="admin-title" noValidate>
        <h1 id="admin-title">站点管理</h1>
        <p className="muted">以管理员密码登录。管理员会话与网关账户互不通用，8 小时后需重新登录。</p>
        <div className="field">
          <label htmlFor={ids.password}>管理员密码</label>
          <input
            id={ids.password}
            ref={ref}
            name="password"
            type="password"
            autoComplete="current-password"
            required
            aria-describedby={error ? ids.error : undefined}
            aria-invalid={error ? true : undefined}
          />
        </div>
        {error && (
          <p id={ids.error} className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={pending}>
          {pending ? "正在登录…" : "登录"}
        </button>
      </form>
    </main>
  );
}
