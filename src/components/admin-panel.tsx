"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { api, errorMessage, type RouterOutputs } from "@/src/trpc/client";
import { QueryProvider, trpc } from "@/src/trpc/react";
import { AuditLog } from "./audit-log";
import { FAMILY_NAMES, formatLocal, formatNumber } from "./format";

type Site = Extract<RouterOutputs["admin"]["sites"], { success: true }>["data"][number];
type Finding =
  | {
      reachable: true;
      family: string;
      version: string | null;
      systemName: string | null;
      quotaPerUnit: number;
      ms: number;
    }
  | { reachable: false; error: string; ms: number };

function FindingText({ finding }: { finding: Finding }) {
  return finding.reachable ? (
    <span>
      可访问（{finding.ms} ms）：{FAMILY_NAMES[finding.family] ?? finding.family}
      {finding.version ? ` ${finding.version}` : ""}
      {finding.systemName ? ` · ${finding.systemName}` : ""} · quota_per_unit {formatNumber(finding.quotaPerUnit)}
    </span>
  ) : (
    <span className="failed-text">无法访问：{finding.error}</span>
  );
}

type FormValues = { name: string; url: string; budget: string };

/** The add and edit form: probed on save; an unreachable site needs 仍然保存. */
function SiteForm({
  initial,
  submitLabel,
  onSave,
  onCancel,
}: {
  initial: FormValues;
  submitLabel: string;
  onSave: (
    values: FormValues,
    confirmUnreachable: boolean,
    sameGateway: boolean,
  ) => Promise<{ ok: boolean; message?: string; finding?: Finding | null; needsConfirmation?: boolean }>;
  onCancel?: () => void;
}) {
  const [values, setValues] = useState(initial);
  const [confirm, setConfirm] = useState(false);
  const [sameGateway, setSameGateway] = useState(false);
  // Editing a saved site's address is a move (the add form starts empty).
  const moving = onCancel !== undefined && values.url.trim() !== initial.url;
  const [pending, setPending] = useState(false);
  const [message, setMessage] = useState("");
  const [finding, setFinding] = useState<Finding | null>(null);
  const [needsConfirmation, setNeedsConfirmation] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setMessage("");
    try {
      const result = await onSave(values, confirm, moving && sameGateway);
      setFinding(result.finding ?? null);
      setNeedsConfirmation(result.needsConfirmation === true);
      if (result.ok) {
        setConfirm(false);
        if (!onCancel) setValues(initial);
      }
      setMessage(result.message ?? "");
    } catch (e) {
      setMessage(errorMessage(e));
    }
    setPending(false);
  }

  const field = (key: keyof FormValues, label: string, props: Record<string, string> = {}) => (
    <label className="field">
      <span>{label}</span>
      <input value={values[key]} onChange={(e) => setValues({ ...values, [key]: e.target.value })} {...props} />
    </label>
  );
  return (
    <form className="site-form" onSubmit={(e) => void submit(e)} aria-label={submitLabel}>
      {field("name", "名称", { required: "", maxLength: "100" })}
      {field("url", "地址", { required: "", placeholder: "https://api.example.com", inputMode: "url" })}
      {field("budget", "每分钟请求数（留空为默认）", { inputMode: "numeric", placeholder: "默认" })}
      {moving && (
        <div className="move-note">
          <p className="muted">
            换地址后，在旧地址登录的会话全部结束，用户需在新地址重新登录；原账本另行保存，新地址的用户无法读取。
          </p>
          <label className="inline">
            <input type="checkbox" checked={sameGateway} onChange={(e) => setSameGateway(e.target.checked)} />
            新地址是同一网关（保留账本；须新地址可访问且类型与系统名称一致）
          </label>
        </div>
      )}
      {needsConfirmation && (
        <label className="inline">
          <input type="checkbox" checked={confirm} onChange={(e) => setConfirm(e.target.checked)} />
          仍然保存（站点现在无法访问）
        </label>
      )}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={pending}>
          {pending ? "正在探测…" : submitLabel}
        </button>
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            取消
          </button>
        )}
      </div>
      {finding && (
        <p role="status">
          探测结果：
          <FindingText finding={finding} />
        </p>
      )}
      {message && (
        <p className="error" role="alert">
          {message}
        </p>
      )}
    </form>
  );
}

const budgetOf = (text: string): number | null => (text.trim() === "" ? null : Number(text.trim()));

/** A refused add or edit as the form shows it: the message, what the probe found, whether to confirm. */
function refusal(answer: { message: string }) {
  return {
    ok: false,
    message: answer.message,
    finding: "probe" in answer ? (answer.probe as Finding) : null,
    needsConfirmation: "needsConfirmation" in answer,
  };
}

function SiteRow({ site, onChanged }: { site: Site; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [removal, setRemoval] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [notice, setNotice] = useState("");
  const editSite = trpc.admin.editSite.useMutation();
  const removeSite = trpc.admin.removeSite.useMutation();
  const probe = trpc.admin.probe.useMutation();

  async function run(op: () => Promise<unknown>) {
    setBusy(true);
    setError("");
    try {
      await op();
    } catch (e) {
      setError(errorMessage(e));
    }
    setBusy(false);
  }

  return (
    <li className="site-item" aria-label={site.name}>
      <div className="site-head">
        <div>
          <strong>{site.name}</strong> <span className="muted">#{site.id}</span>
          <div className="muted site-url">{site.url}</div>
        </div>
        <div className="site-actions">
          <button
            type="button"
            className="ghost"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                await probe.mutateAsync({ id: site.id });
                onChanged();
              })
            }
          >
            探测
          </button>
          <button type="button" className="ghost" onClick={() => setEditing(!editing)}>
            编辑
          </button>
          <button
            type="button"
            className="ghost"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                const answer = await removeSite.mutateAsync({ id: site.id });
                if (answer.success) setRemoval(answer.data.liveSessions);
                else setError(answer.message);
              })
            }
          >
            移除
          </button>
        </div>
      </div>
      <dl className="site-facts">
        <div>
          <dt>类型</dt>
          <dd>
            {FAMILY_NAMES[site.family] ?? site.family}
            {site.version ? ` ${site.version}` : ""}
            {site.systemName ? ` · ${site.systemName}` : ""}
          </dd>
        </div>
        <div>
          <dt>健康</dt>
          <dd>
            {site.health ? (
              site.health.ok ? (
                <span>可访问 · {site.health.ms} ms</span>
              ) : (
                <span className="failed-text">无法访问：{site.health.error}</span>
              )
            ) : (
              <span className="muted">尚未探测</span>
            )}
            {site.health && <span className="muted"> · {formatLocal(site.health.at)}</span>}
          </dd>
        </div>
        <div>
          <dt>额度单位</dt>
          <dd>
            {formatNumber(site.money.quotaPerUnit)} / 美元 · {site.money.display}
          </dd>
        </div>
        <div>
          <dt>每分钟请求</dt>
          <dd>{site.requestsPerMinute ?? "默认"}</dd>
        </div>
        <div>
          <dt>有效会话</dt>
          <dd>{formatNumber(site.liveSessions)}</dd>
        </div>
        <div>
          <dt>账本条数</dt>
          <dd>{formatNumber(site.ledgerEntries)}</dd>
        </div>
      </dl>
      {removal !== null && (
        <div className="confirm" role="alertdialog" aria-label="确认移除">
          <p>
            该站点有 <strong>{removal}</strong>{" "}
            个有效会话。移除后这些会话仍可使用，但不再显示站点信息，也无法读取站点数据。确认移除「{site.name}」？
          </p>
          <div className="form-actions">
            <button
              type="button"
              className="danger"
              disabled={busy}
              onClick={() =>
                void run(async () => {
                  const answer = await removeSite.mutateAsync({ id: site.id, confirm: true });
                  if (!answer.success) setError(answer.message);
                  setRemoval(null);
                  onChanged();
                })
              }
            >
              确认移除
            </button>
            <button type="button" className="secondary" onClick={() => setRemoval(null)}>
              取消
            </button>
          </div>
        </div>
      )}
      {editing && (
        <SiteForm
          initial={{
            name: site.name,
            url: site.url,
            budget: site.requestsPerMinute === null ? "" : String(site.requestsPerMinute),
          }}
          submitLabel="保存修改"
          onCancel={() => setEditing(false)}
          onSave={async (v, confirmUnreachable, sameGateway) => {
            const answer = await editSite.mutateAsync({
              id: site.id,
              name: v.name,
              url: v.url,
              requestsPerMinute: budgetOf(v.budget),
              confirmUnreachable,
              sameGateway,
            });
            if (answer.success) {
              const move = answer.data.move;
              setNotice(
                move
                  ? `已迁移到新地址：结束了旧地址的 ${move.endedSessions} 个会话；` +
                      (move.ledger === "kept"
                        ? "账本已保留。"
                        : `原账本（${move.archivedEntries} 条）已另行保存，新地址的用户无法读取。`)
                  : "",
              );
              setEditing(false);
              onChanged();
              return { ok: true, finding: answer.data.probe };
            }
            return refusal(answer);
          }}
        />
      )}
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

function Panel() {
  const router = useRouter();
  const sites = trpc.admin.sites.useQuery();
  const addSite = trpc.admin.addSite.useMutation();
  const probeAll = trpc.admin.probe.useMutation();
  const utils = trpc.useUtils();
  const refresh = () => {
    void utils.admin.sites.invalidate();
    void utils.admin.audit.invalidate();
  };

  async function signOut() {
    await api.admin.logout.mutate().catch(() => undefined);
    router.refresh();
  }

  return (
    <main className="page">
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
              return { ok: true, finding: answer.data.probe, message: "" };
            }
            return refusal(answer);
          }}
        />
      </section>

      <AuditLog />
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
