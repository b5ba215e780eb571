"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { errorMessage, isUnauthorized, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { LocalTime } from "./local-time";

export function SessionList({ sessions }: { sessions: RouterOutputs["session"]["list"] }) {
  const router = useRouter();
  const revokeOthers = trpc.session.revokeOthers.useMutation();
  const revoke = trpc.session.revoke.useMutation();
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState("");
  const others = sessions.filter((s) => !s.current).length;

  async function run(key: string, action: () => Promise<unknown>, done: string) {
    setBusy(key);
    setMessage("");
    try {
      await action();
      setMessage(done);
    } catch (e) {
      setMessage(isUnauthorized(e) ? "当前会话已失效，请重新登录" : errorMessage(e));
    }
    setBusy(null);
    router.refresh();
  }

  return (
    <section className="card" aria-labelledby="sessions-title">
      <div className="card-head">
        <h2 id="sessions-title">登录会话</h2>
        <button
          type="button"
          className="secondary"
          disabled={others === 0 || busy !== null}
          onClick={() => void run("others", () => revokeOthers.mutateAsync(), "已退出其他所有会话")}
        >
          退出其他所有会话
        </button>
      </div>
      <ul className="sessions">
        {sessions.map((s, i) => (
          <li key={s.id}>
            <span>
              <strong>{s.current ? "当前会话" : `会话 ${i + 1}`}</strong>
              <span className="muted">
                登录于 <LocalTime iso={s.createdAt} /> · 到期 <LocalTime iso={s.expiresAt} />
              </span>
            </span>
            {!s.current && (
              <button
                type="button"
                className="ghost"
                disabled={busy !== null}
                onClick={() => void run(s.id, () => revoke.mutateAsync({ id: s.id }), "已结束该会话")}
              >
                结束
              </button>
            )}
          </li>
        ))}
      </ul>
      <p className="muted" role="status" aria-live="polite">
        {message}
      </p>
    </section>
  );
}
