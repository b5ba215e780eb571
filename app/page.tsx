import { Dashboard } from "@/src/components/dashboard";
import { SignInPage } from "@/src/components/sign-in-page";
import { isUnauthorized, serverCaller } from "@/src/trpc/server";

export const dynamic = "force-dynamic";

/** The dashboard for a signed-in user, the sign-in page for everyone else, decided from the cookie. */
export default async function Home({ searchParams }: { searchParams: Promise<Record<string, string | string[]>> }) {
  const api = await serverCaller();
  const me = await api.auth.me().catch((error: unknown) => {
    if (isUnauthorized(error)) return null;
    throw error;
  });
  if (!me) return <SignInPage sites={await api.site.list()} />;
  const { tab, add } = await searchParams;
  if (add !== undefined) return <SignInPage sites={await api.site.list()} adding />;
  return <Dashboard me={me.data} sessions={await api.session.list()} tab={typeof tab === "string" ? tab : ""} />;
}
