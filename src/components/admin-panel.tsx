"use client";

import { useRouter } from "next/navigation";
import { errorMessage } from "@/src/trpc/answers";
import { QueryProvider, trpc } from "@/src/trpc/react";
import { AdminWorkspaces } from "./admin-workspaces";
import { AdminWorkspaceSites } from "./admin-workspace-sites";
import { AuditLog } from "./audit-log";
import { SiteForm, budgetOf, refusal, savedUnreachable } from "./site-form";
import { SiteRow } from "./site-row";

function Panel() {
  const router = useRouter();
  const sites = trpc.admin.sites.useQuery();
  const addSite = trpc.admin.addSite.useMutation();
  const probeAll = trpc.admin.probe.useMutation();
  const utils = trpc.useUtils();
  const logout = trpc.admin.logout.useMutation();
  const refresh = () => {
    void utils.admin.sites.invalidate();
    void utils.admin.audit.invalidate();
  };

  async function signOut() {
    await logout.mutateAsync().catch(() => undefined);
    router.refresh();
  }

  return (
    <main id="main" tabIndex={-1} className="page">
      <header className="top">
        <div>
          <p className="eyebrow">管理员</p>
          <h1>站点管理</h1>
        </div>
        <button type="button" className="secondary" onClick={() => void signOut()}>
          退出
        </button>
      </header>

      <section className="card" aria-labelledby="sites-title">
        <div className="card-head">
          <h2 id="sites-title">站点</h2>
          <button
            type="button"
            className="secondary"
            disabled={probeAll.isPending}
            onClick={() => void probeAll.mutateAsync({}).then(refresh)}
          >
            {probeAll.isPending ? "正在探测…" : "全部探测"}
          </button>
        </div>
        {sites.data?.success ? (
          sites.data.data.length === 0 ? (
            <p className="state">还没有站点。在下面添加第一个。</p>
          ) : (
            <ul className="site-list">
              {sites.data.data.map((s) => (
                <SiteRow key={s.id} site={s} onChanged={refresh} />
              ))}
            </ul>
          )
        ) : (
          <p className="state">{sites.error ? errorMessage(sites.error) : "正在读取站点…"}</p>
        )}
      </section>

      <section className="card" aria-labelledby="add-title">
        <h2 id="add-title">添加站点</h2>
        <p className="muted">保存前会先访问站点的 /api/status，确认它是哪一种网关及其额度设置。</p>
        <SiteForm
          initial={{ name: "", url: "", budget: "" }}
          submitLabel="添加"
          onSave={async (v, confirmUnreachable) => {
            const answer = await addSite.mutateAsync({
              name: v.name,
              url: v.url,
              requestsPerMinute: budgetOf(v.budget),
              confirmUnreachable,
            });
            if (answer.success) {
              refresh();
              return { ok: true, finding: answer.data.probe, message: "", notice: savedUnreachable(answer.data.probe) };
            }
            return refusal(answer);
          }}
        />
      </section>

      <AdminWorkspaces onChanged={refresh} />

      <AdminWorkspaceSites onChanged={refresh} />

      <AuditLog sites={sites.data?.success ? sites.data.data : []} />
    </main>
  );
}

export function AdminPanel() {
  return (
    <QueryProvider>
      <Panel />
    </QueryProvider>
  );
}
