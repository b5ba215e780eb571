"use client";

import { useId, useRef, useState, type FormEvent } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { Failed, Loading, ErrorNote } from "./site-data";

/**
 * The workspace's second factor: turned on with an authenticator app (a QR code, or the secret
 * typed in), confirmed with a code and the password; the recovery codes are shown once.
 */
export function WorkspaceTotp() {
  const utils = trpc.useUtils();
  const ids = { code: useId(), password: useId() };
  const status = trpc.workspace.totpStatus.useQuery();
  const begin = trpc.workspace.beginTotp.useMutation();
  const enable = trpc.workspace.enableTotp.useMutation();
  const disable = trpc.workspace.disableTotp.useMutation();
  const [setup, setSetup] = useState<{ secret: string; qrSvg: string } | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [error, setError] = useState("");
  const code = useRef<HTMLInputElement>(null);
  const password = useRef<HTMLInputElement>(null);

  async function run(op: (c: string, p: string) => Promise<void>) {
    const [c, p] = [code.current?.value.trim() ?? "", password.current?.value ?? ""];
    if (code.current) code.current.value = "";
    if (password.current) password.current.value = "";
    setError("");
    try {
      await op(c, p);
      await utils.workspace.totpStatus.invalidate();
    } catch (e) {
      setError(errorMessage(e));
    }
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (setup) {
      void run(async (c, p) => {
        const made = await enable.mutateAsync({ secret: setup.secret, code: c, password: p });
        setCodes(made.data.recoveryCodes);
        setSetup(null);
      });
    } else {
      void run(async (c, p) => void (await disable.mutateAsync({ code: c, password: p })));
    }
  }

  if (status.isPending) return <Loading label="两步验证" />;
  if (status.error) return <Failed message={errorMessage(status.error)} onRetry={() => void status.refetch()} />;
  const { enabled, recoveryLeft } = status.data.data;
  const fields = (
    <>
      <div className="field">
        <label htmlFor={ids.code}>{setup ? "验证器显示的 6 位验证码" : "验证码或恢复码"}</label>
        <input id={ids.code} ref={code} type="text" autoComplete="one-time-code" spellCheck={false} required />
      </div>
      <div className="field">
        <label htmlFor={ids.password}>当前密码</label>
        <input id={ids.password} ref={password} type="password" autoComplete="current-password" required />
      </div>
    </>
  );

  return (
    <section className="card" aria-labelledby="ws-totp-title">
      <h2 id="ws-totp-title">两步验证</h2>
      {codes && (
        <div className="notice" role="status">
          <p>两步验证已开启。以下恢复码只显示这一次，每个只能用一次，请保存在安全的地方：</p>
          <pre className="code">{codes.join("\n")}</pre>
          <button type="button" className="ghost" onClick={() => setCodes(null)}>
            我已保存
          </button>
        </div>
      )}
      {enabled ? (
        <>
          <p className="muted">已开启：登录时需要验证器中的验证码。剩余恢复码 {recoveryLeft} 个。</p>
          <form className="form" onSubmit={onSubmit}>
            {fields}
            <button type="submit" className="secondary" disabled={disable.isPending}>
              关闭两步验证
            </button>
          </form>
        </>
      ) : setup ? (
        <>
          <p className="muted">
            用验证器 App（如 Google Authenticator、Microsoft Authenticator）扫描二维码，或手动输入密钥：
          </p>
          <img
            className="qr"
            alt="两步验证二维码"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(setup.qrSvg)}`}
            width={180}
            height={180}
          />
          <pre className="code">{setup.secret.replace(/(.{4})/g, "$1 ").trim()}</pre>
          <form className="form" onSubmit={onSubmit}>
            {fields}
            <div className="form-actions">
              <button type="submit" className="primary" disabled={enable.isPending}>
                确认并开启
              </button>
              <button type="button" className="ghost" onClick={() => setSetup(null)}>
                取消
              </button>
            </div>
          </form>
        </>
      ) : (
        <>
          <p className="muted">开启后，登录工作区除密码外还需要验证器 App 中的 6 位验证码。</p>
          <button
            type="button"
            className="primary"
            disabled={begin.isPending}
            onClick={() =>
              void begin
                .mutateAsync()
                .then((made) => setSetup({ secret: made.data.secret, qrSvg: made.data.qrSvg }))
                .catch((e: unknown) => setError(errorMessage(e)))
            }
          >
            开启两步验证
          </button>
        </>
      )}
      <ErrorNote message={error} />
    </section>
  );
}
