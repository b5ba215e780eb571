"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { api, errorMessage, isUnauthorized } from "@/src/trpc/client";

export function SignOutButton() {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState("");

  async function signOut() {
    setPending(true);
    setError("");
    try {
      await api.auth.logout.mutate();
    } catch (e) {
      // Already signed out elsewhere: the sign-in page is what the user wants anyway.
      if (!isUnauthorized(e)) {
        setError(errorMessage(e));
        setPending(false);
        return;
      }
    }
    router.refresh();
  }

  return (
    <span className="sign-out">
      <button type="button" className="secondary" disabled={pending} aria-busy={pending} onClick={() => void signOut()}>
        {pending ? "正在退出…" : "退出登录"}
      </button>
      <span className="error" role="status" aria-live="polite">
        {error}
      </span>
    </span>
  );
}
