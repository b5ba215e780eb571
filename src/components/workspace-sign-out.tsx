"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { api, errorMessage, isUnauthorized } from "@/src/trpc/client";

/** Signs this device out of the workspace (its accounts stay saved; the other devices stay in). */
export function WorkspaceSignOut() {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState("");

  async function signOut() {
    setPending(true);
    setError("");
    try {
      await api.workspace.logout.mutate();
    } catch (e) {
      if (!isUnauthorized(e)) {
        setError(errorMessage(e));
        setPending(false);
        return;
      }
    }
    router.replace("/workspace");
    router.refresh();
  }

  return (
    <span className="sign-out">
      <button type="button" className="secondary" disabled={pending} aria-busy={pending} onClick={() => void signOut()}>
        {pending ? "正在退出…" : "退出工作区"}
      </button>
      <span className="error" role="status" aria-live="polite">
        {error}
      </span>
    </span>
  );
}
