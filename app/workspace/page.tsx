import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { WorkspaceSignIn } from "@/src/components/workspace-sign-in";
import { isUnauthorized, serverCaller } from "@/src/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "工作区" };

/** Signing in to a workspace, or creating one; a browser already in one goes to its dashboard. */
export default async function WorkspacePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[]>>;
}) {
  const api = await serverCaller();
  const signedIn = await api.workspace.me().catch((error: unknown) => {
    if (isUnauthorized(error)) return null;
    throw error;
  });
  if (signedIn) redirect("/");
  const { mode } = await api.workspace.signupMode();
  const { create } = await searchParams;
  return <WorkspaceSignIn signup={mode} creating={create !== undefined} />;
}
