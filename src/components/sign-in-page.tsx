import { SignInForm, type Sites } from "./sign-in-form";

export function SignInPage({ sites }: { sites: Sites }) {
  return (
    <main className="page narrow">
      <header className="intro">
        <h1>登录网关站点</h1>
        <p className="muted">选择站点，填写用户ID和个人设置中生成的系统访问令牌。</p>
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
