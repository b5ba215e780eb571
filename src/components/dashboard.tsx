import type { RouterOutputs } from "@/src/trpc/client";
import { formatNumber, formatRemaining, formatTime, formatUsd, roleName } from "./format";
import { SessionList } from "./session-list";
import { SignOutButton } from "./sign-out-button";

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

function Amount({ label, quota }: { label: string; quota: number | undefined }) {
  if (quota === undefined) return null;
  return (
    <div className="stat">
      <span className="stat-label">{label}</span>
      <span className="stat-value">{formatUsd(quota)}</span>
      <span className="muted">{formatNumber(quota)} 额度</span>
    </div>
  );
}

type Props = { me: RouterOutputs["auth"]["me"]["data"]; sessions: RouterOutputs["session"]["list"] };

export function Dashboard({ me, sessions }: Props) {
  const info = me.userInfo;
  const displayName = text(info, "display_name");
  const username = text(info, "username");
  const id = num(info, "id");
  const group = text(info, "group");
  const role = num(info, "role");
  const quota = num(info, "quota");
  const used = num(info, "used_quota");
  const requests = num(info, "request_count");
  const current = sessions.find((s) => s.current);

  return (
    <main className="page">
      <header className="top">
        <div>
          <p className="eyebrow">{me.site ? me.site.name : "站点已移除"}</p>
          <h1>{displayName ?? username ?? `用户 ${id ?? ""}`}</h1>
        </div>
        <SignOutButton />
      </header>

      <section className="stats" aria-label="额度">
        <Amount label="剩余额度" quota={quota} />
        <Amount label="已用额度" quota={used} />
        {requests !== undefined && (
          <div className="stat">
            <span className="stat-label">请求次数</span>
            <span className="stat-value">{formatNumber(requests)}</span>
            <span className="muted">次</span>
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="account-title">
        <h2 id="account-title">账户</h2>
        <dl className="rows">
          {displayName && <Row label="显示名称">{displayName}</Row>}
          {username && <Row label="用户名">{username}</Row>}
          {id !== undefined && <Row label="用户ID">{id}</Row>}
          {group && <Row label="分组">{group}</Row>}
          {role !== undefined && <Row label="角色">{roleName(role)}</Row>}
          <Row label="站点">
            {me.site ? (
              <>
                {me.site.name} <span className="muted">{me.site.url}</span>
              </>
            ) : (
              <span className="muted">登录时所用的站点已被移除</span>
            )}
          </Row>
          {current && (
            <Row label="会话到期">
              {formatTime(current.expiresAt)} <span className="muted">（{formatRemaining(current.expiresAt)}）</span>
            </Row>
          )}
        </dl>
      </section>

      <SessionList sessions={sessions} />
    </main>
  );
}
