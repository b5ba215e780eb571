import Link from "next/link";
import { SignInForm, type Sites } from "./sign-in-form";

/** The sign-in form; `adding` when the browser already holds accounts (添加账户), with a way back. */
export function SignInPage({ sites, adding = false }: { sites: Sites; adding?: boolean }) {
  return (
    <main className="page narrow">
      <header className="intro">
        {adding && (
          <Link className="back" href="/">
            ← 返回我的账户
          </Link>
        )}
        <h1>{adding ? "添加账户" : "登录网关站点"}</h1>
        <p className="muted">
          {adding
            ? "登录另一个账户后，它会和已有账户一起保存在本浏览器中，可随时切换。"
            : "选择站点，填写用户ID和个人设置中生成的系统访问令牌。"}
        </p>
      </header>
      {sites.length > 0 ? (
        <SignInForm sites={sites} />
      ) : (
        <section className="card empty" aria-labelledby="empty-title">
          <h2 id="empty-title">还没有注册任何站点</h2>
          <p>请先在服务器上添加一个站点，然后刷新本页：</p>
          <pre>
            <code>npm run sites -- add --name &lt;名称&gt; --url &lt;站点地址&gt;</code>
          </pre>
        </section>
      )}
    </main>
  );
}
