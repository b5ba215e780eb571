import type { Metadata } from "next";
import { AdminPanel } from "@/src/components/admin-panel";
import { AdminSignIn } from "@/src/components/admin-sign-in";
import { isUnauthorized, serverCaller } from "@/src/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "站点管理" };

/** Site administration: how to set the password, the operator's sign-in, or the sites. */
export default async function AdminPage() {
  const api = await serverCaller();
  const { passwordSet } = await api.admin.status();
  if (!passwordSet) {
    return (
      <main id="main" tabIndex={-1} className="page narrow">
        <section className="card" aria-labelledby="admin-title">
          <h1 id="admin-title">站点管理</h1>
          <p>尚未设置管理员密码。请在运行本服务的服务器上，于项目目录中执行：</p>
          <pre className="code">npm run sites -- admin-password</pre>
          <p className="muted">
            密码至少 12 个字符，只以 scrypt 散列保存；再次执行会替换密码并结束所有管理员会话。设置后刷新本页登录。
          </p>
        </section>
      </main>
    );
  }
  const sites = await api.admin.sites().catch((error: unknown) => {
    if (isUnauthorized(error)) return null;
    throw error;
  });
  if (!sites) return <AdminSignIn />;
  return <AdminPanel />;
}
