import { Dashboard } from "@/src/components/dashboard";
import { SignInPage } from "@/src/components/sign-in-page";
import { isUnauthorized, serverCaller } from "@/src/trpc/server";

export const dynamic = "force-dynamic";

const orNull = (error: unknown) => {
  if (isUnauthorized(error)) return null;
  throw error;
};

/**
 * The dashboard for a signed-in user, the sign-in page for everyone else, decided from the
 * cookies: a workspace's (its accounts, on any device) before the browser's own accounts.
 */
export default async function Home({ searchParams }: { searchParams: Promise<Record<string, string | string[]>> }) {
  const api = await serverCaller();
  const { tab, add, site, user } = await searchParams;
  const requested = typeof tab === "string" ? tab : "";
  // 重新登录 from a 会话已过期 note: the site and user id filled in.
  const id = (v: unknown) => (typeof v === "string" && /^\d{1,15}$/.test(v) ? Number(v) : undefined);
  const initial = { siteId: id(site), userId: id(user) };
  const workspace = await api.workspace.me().catch(orNull);
  if (workspace) {
    const { name, timeZone } = workspace.data.workspace;
    const { accounts } = workspace.data;
    // The registered sites and the workspace's own.
    const sites = async () => {
      const { registered, own } = (await api.workspace.sites()).data;
      return [...registered, ...own.map(({ id, name, url }) => ({ id, name, url }))];
    };
    if (accounts === 0 && requested !== "workspace") {
      return <SignInPage sites={await sites()} workspace={{ name, accounts }} />;
    }
    if (add !== undefined) {
      return <SignInPage sites={await sites()} workspace={{ name, accounts }} initial={initial} />;
    }
    const [me, current] = accounts > 0 ? await Promise.all([api.auth.me(), api.account.current()]) : [null, null];
    return (
      <Dashboard
        me={me?.data ?? null}
        account={current?.key ?? null}
        sessions={[]}
        tab={requested}
        workspace={{ name, timeZone }}
      />
    );
  }
  const me = await api.auth.me().catch(orNull);
  if (!me) return <SignInPage sites={await api.site.list()} />;
  if (add !== undefined) return <SignInPage sites={await api.site.list()} adding initial={initial} />;
  const [current, sessions] = await Promise.all([api.account.current(), api.session.list()]);
  return <Dashboard me={me.data} account={current.key} sessions={sessions} tab={requested} />;
}
