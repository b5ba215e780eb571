import Link from "next/link";
import type { RouterOutputs } from "@/src/trpc/answers";
import { QueryProvider } from "@/src/trpc/react";
import { formatRemaining, roleName } from "./format";
import { FocusMain, LocalTime, PageZone, ZoneNote } from "./local-time";
import { AccountActions } from "./account-actions";
import { AccountSwitcher } from "./account-switcher";
import { AccountsOverview } from "./accounts-overview";
import { LogsPanel } from "./logs-panel";
import { SessionList } from "./session-list";
import { SignOutButton } from "./sign-out-button";
import { SummaryPanel } from "./summary-panel";
import { TokensPanel } from "./tokens-panel";
import { TopupsPanel } from "./topups-panel";
import { UsageTab } from "./usage-tab";
import { WorkspaceSettings } from "./workspace-settings";
import { AlertsPanel } from "./alerts-panel";
import { PricesPanel } from "./prices-panel";

const TABS = [
  { key: "accounts", label: "全部账户" },
  { key: "overview", label: "概览" },
  { key: "logs", label: "使用日志" },
  { key: "tokens", label: "令牌" },
  { key: "topups", label: "充值记录" },
  { key: "usage", label: "用量分析" },
  { key: "prices", label: "模型价格" },
  { key: "alerts", label: "提醒" },
  { key: "workspace", label: "工作区" },
] as const;

type Info = Record<string, unknown>;

const text = (info: Info, key: string) => (typeof info[key] === "string" && info[key] !== "" ? info[key] : undefined);
const num = (info: Info, key: string) =>
  typeof info[key] === "number" && Number.isFinite(info[key]) ? info[key] : undefined;

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

type Props = {
  /** The active account (null: a workspace without accounts yet, on its own tab). */
  me: RouterOutputs["auth"]["me"]["data"] | null;
  /** The key of the account the page is rendered for: every call it makes names it (null: none yet). */
  account: string | null;
  sessions: RouterOutputs["session"]["list"];
  tab: string;
  /** Set when the page is a workspace's: its accounts, on any device. */
  workspace?: { name: string; timeZone: string };
};

export function Dashboard({ me, account, sessions, tab: requested, workspace }: Props) {
  // The page a signed-in user lands on is every account at once; an account without its site has
  // nothing live to show on its own tabs, and its 概览 says why.
  // 工作区 and 提醒 are a workspace's (its server watches its saved accounts).
  const tabs = TABS.filter((t) => (t.key !== "workspace" && t.key !== "alerts") || workspace);
  const tab = tabs.some((t) => t.key === requested) ? requested : "accounts";
  const own = !me
    ? tab === "alerts"
      ? "alerts"
      : "workspace"
    : ["accounts", "workspace", "alerts"].includes(tab) || me.site
      ? tab
      : "overview";
  const info = me?.userInfo ?? {};
  const displayName = text(info, "display_name");
  const username = text(info, "username");
  const id = num(info, "id");
  const group = text(info, "group");
  const role = num(info, "role");
  const current = sessions.find((s) => s.current);
  const accountName = displayName ?? username ?? `用户 ${id ?? ""}`;

  return (
    // One query client for the page, keyed by its account: another account's page starts empty.
    <QueryProvider key={account ?? ""} account={account}>
      {/* A workspace's page reads its times and days in the workspace's zone, as its alerts do. */}
      <PageZone tz={workspace?.timeZone ?? null} />
      <main id="main" tabIndex={-1} className="page dashboard">
        <header className="top">
          {workspace ? (
            <div>
              <p className="eyebrow">工作区</p>
              <h1>{workspace.name}</h1>
            </div>
          ) : own === "accounts" ? (
            // Every account of the browser: the person's page, not the active account's.
            <div>
              <p className="eyebrow">网关站点控制台</p>
              <h1>我的网关账户</h1>
            </div>
          ) : (
            <div>
              <p className="eyebrow">{me?.site ? me.site.name : "站点已移除"}</p>
              <h1>{accountName}</h1>
            </div>
          )}
          <SignOutButton workspace={workspace !== undefined} account={accountName} />
        </header>

        {me && <AccountSwitcher />}

        <nav className="tabs" aria-label="账户页面">
          {tabs
            .filter(
              (t) =>
                me?.site || t.key === "accounts" || t.key === "overview" || t.key === "workspace" || t.key === "alerts",
            )
            .map((t) => (
              <Link
                key={t.key}
                href={t.key === "accounts" ? "/" : `/?tab=${t.key}`}
                aria-current={t.key === own ? "page" : undefined}
              >
                {t.label}
              </Link>
            ))}
        </nav>

        {own === "accounts" && <AccountsOverview />}
        {me?.site && own === "overview" && <SummaryPanel />}
        {me?.site && own === "overview" && <AccountActions />}
        {own === "logs" && <LogsPanel />}
        {own === "tokens" && <TokensPanel />}
        {own === "topups" && <TopupsPanel />}
        {own === "usage" && <UsageTab />}
        {own === "prices" && <PricesPanel />}
        {own === "alerts" && <AlertsPanel />}
        {own === "workspace" && <WorkspaceSettings />}

        {own === "overview" && (
          <section className="card" aria-labelledby="account-title">
            <h2 id="account-title">账户</h2>
            <dl className="rows">
              {displayName && <Row label="显示名称">{displayName}</Row>}
              {username && <Row label="用户名">{username}</Row>}
              {id !== undefined && <Row label="用户ID">{id}</Row>}
              {group && <Row label="分组">{group}</Row>}
              {role !== undefined && <Row label="角色">{roleName(role)}</Row>}
              <Row label="站点">
                {me?.site ? (
                  <>
                    {me.site.name} <span className="muted">{me.site.url}</span>
                  </>
                ) : (
                  <span className="muted">登录时所用的站点已被移除</span>
                )}
              </Row>
              {current && (
                <Row label="会话到期">
                  <LocalTime iso={current.expiresAt} />{" "}
                  <span className="muted">（{formatRemaining(current.expiresAt)}）</span>
                </Row>
              )}
            </dl>
          </section>
        )}
        {own === "overview" && !workspace && <SessionList sessions={sessions} />}
        <ZoneNote workspace={workspace !== undefined} />
        <FocusMain />
      </main>
    </QueryProvider>
  );
}
