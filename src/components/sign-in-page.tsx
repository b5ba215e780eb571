import Link from "next/link";
import { SignInForm, type Sites } from "./sign-in-form";

/**
 * The sign-in form; `adding` when the browser already holds accounts (添加账户), with a way back.
 * In a workspace (`workspace` names it) the account is saved in it.
 */
export function SignInPage({
  sites,
  adding = false,
  workspace,
  initial,
}: {
  sites: Sites;
  adding?: boolean;
  workspace?: { name: string; accounts: number };
  initial?: { siteId?: number; userId?: number };
}) {
  return (
    <main id="main" tabIndex={-1} className="page narrow">
      <header className="intro">
        {(adding || (workspace && workspace.accounts > 0)) && (
          <Link className="back" href="/">
            ← 返回我的账户
          </Link>
        )}
        {workspace && <p className="eyebrow">工作区 · {workspace.name}</p>}
        <h1>{workspace || adding ? "添加账户" : "登录网关站点"}</h1>
        <p className="muted">
          {workspace
            ? "站点验证通过后，账户保存在工作区中：访问令牌加密保存、自动续期，在任何设备登录工作区都能看到。"
            : adding
              ? "登录另一个账户后，它会和已有账户一起保存在本浏览器中，可随时切换。"
              : "选择站点，填写用户ID和个人设置中生成的系统访问令牌。"}
        </p>
      </header>
      {sites.length > 0 ? (
        <>
          <SignInForm sites={sites} workspace={workspace !== undefined} initial={initial} />
          {!workspace && !adding && (
            <p className="muted switch-link">
              想在手机和电脑上都看到这些账户、并让服务器全天同步？<Link href="/workspace">登录或创建工作区</Link>
            </p>
          )}
          {workspace && <OwnSiteLink />}
        </>
      ) : workspace ? (
        <section className="card empty" aria-labelledby="empty-title">
          <h2 id="empty-title">还没有可用的站点</h2>
          <OwnSiteLink />
        </section>
      ) : (
        <section className="card empty" aria-labelledby="empty-title">
          <h2 id="empty-title">还没有注册任何站点</h2>
          <p>
            请管理员在 <Link href="/admin">站点管理（/admin）</Link>{" "}
            中添加站点，或在服务器上运行下面的命令，然后刷新本页：
          </p>
          <pre>
            <code>npm run sites -- add --name &lt;名称&gt; --url &lt;站点地址&gt;</code>
          </pre>
        </section>
      )}
    </main>
  );
}

/** A workspace may add a site the service lacks (its 工作区 tab). */
function OwnSiteLink() {
  return (
    <p className="muted switch-link">
      站点不在列表中？<Link href="/?tab=workspace#ws-sites-title">在「工作区」中添加自己的站点</Link>
    </p>
  );
}
