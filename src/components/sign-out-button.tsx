"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { errorMessage, isUnauthorized } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";

/**
 * Signs out: the active account (the contract's logout; the browser's other accounts stay), or
 * with `workspace` this device out of its workspace (the accounts stay saved, the other devices
 * stay in) and on to its sign-in page. The button says which.
 */
export function SignOutButton({ workspace = false, account }: { workspace?: boolean; account: string }) {
  const router = useRouter();
  const logout = (workspace ? trpc.workspace.logout : trpc.auth.logout).useMutation();
  // Pending from the click until the page has moved on (the mutation ends before that).
  const [leaving, setLeaving] = useState(false);
  const pending = logout.isPending || leaving;
  const error = logout.error && !isUnauthorized(logout.error) ? errorMessage(logout.error) : "";

  async function signOut() {
    try {
      await logout.mutateAsync();
    } catch (e) {
      // Already signed out elsewhere: the sign-in page is what the user wants anyway.
      if (!isUnauthorized(e)) return;
    }
    setLeaving(true);
    if (workspace) router.replace("/workspace");
    router.refresh();
  }

  return (
    <span className="sign-out">
      <button
        type="button"
        className="secondary"
        disabled={pending}
        aria-busy={pending}
        title={workspace ? "本设备退出工作区；账户仍保存在工作区中" : `退出 ${account}；本浏览器的其他账户保持登录`}
        onClick={() => void signOut()}
      >
        {pending ? "正在退出…" : workspace ? "退出工作区" : "退出当前账户"}
      </button>
      <span className="error" role="status" aria-live="polite">
        {error}
      </span>
    </span>
  );
}
