"use client";

import { useState } from "react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { FAMILY_NAMES, formatLocal, formatNumber } from "./format";
import { SiteForm, budgetOf, refusal, savedUnreachable } from "./site-form";

export type Site = Extract<RouterOutputs["admin"]["sites"], { success: true }>["data"][number];
export function SiteRow({ site, onChanged }: { site: Site; onChanged: () => void }) {
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
          {removal > 0 ? (
            <p>
              该站点有 <strong>{removal}</strong>{" "}
              个有效会话。移除后这些会话仍可使用，但不再显示站点信息，也无法读取站点数据。确认移除「{site.name}」？
            </p>
          ) : (
            <p>该站点没有有效会话。确认移除「{site.name}」？</p>
          )}
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
              const unreachable = savedUnreachable(answer.data.probe);
              if (unreachable) setNotice((n) => (n ? `${n}${unreachable}` : unreachable));
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
