"use client";

import { useState } from "react";
import { useSearchParams } from "next/navigation";
import { formatMoney } from "@/src/shared/money";
import { checked, errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { formatLocal, formatNumber } from "./format";
import { Pager, pageParam } from "./pager";
import { Empty, Failed, Freshness, Loading, TableWrap, useSiteData } from "./site-data";
import { useMoney } from "./summary-panel";
import { KeyExportDialog } from "./key-export";
import { DeleteDialog, RevealDialog, TokenForm, type TokenItem } from "./token-manager";

const STATUS: Record<string, string> = {
  enabled: "已启用",
  disabled: "已禁用",
  expired: "已过期",
  exhausted: "已用尽",
};

type Open =
  | { kind: "create" }
  | { kind: "edit"; token: TokenItem }
  | { kind: "reveal"; token: { id: number; name: string } }
  | { kind: "delete"; tokens: TokenItem[] }
  | { kind: "export" }
  | null;

/** A time that breaks, where it must, between its day and its hour, never inside either. */
function DayAndTime({ iso }: { iso: string }) {
  const [day, time] = formatLocal(iso).split(" ");
  return (
    <>
      <span className="nowrap">{day}</span> <span className="nowrap">{time}</span>
    </>
  );
}

/** The account's API tokens on its site: the list (keys masked), and creating, editing, enabling, deleting, revealing. */
export function TokensPanel() {
  const params = useSearchParams();
  const money = useMoney();
  const input = { page: pageParam(params.get("page")), pageSize: 20 };
  const { answer, refreshing, refresh } = useSiteData("tokens", input);
  const utils = trpc.useUtils();
  const rules = trpc.tokens.rules.useQuery();
  const setStatus = trpc.tokens.setStatus.useMutation();
  const reveal = trpc.tokens.reveal.useMutation();
  const remove = trpc.tokens.remove.useMutation();
  const [open, setOpen] = useState<Open>(null);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [notice, setNotice] = useState<{ ok: boolean; text: string } | null>(null);
  const [deleteError, setDeleteError] = useState("");
  const moneyOf = (quota: number) => (money ? formatMoney(quota, money) : formatNumber(quota));
  const ruleData = rules.data?.success ? rules.data.data : null;
  const items = answer.data?.items ?? [];

  /** 复制地址和密钥: the key fetched and copied with the site's address, as a client asks for them. */
  async function copyKey(token: TokenItem) {
    setNotice(null);
    try {
      const answer = checked(await reveal.mutateAsync({ id: token.id }));
      const text = `Base URL: ${answer.data.baseUrl.replace(/\/+$/, "")}/v1\nAPI Key: ${answer.data.key}`;
      await navigator.clipboard.writeText(text);
      setNotice({ ok: true, text: `已复制令牌「${token.name}」的地址和密钥` });
    } catch (e) {
      setNotice({ ok: false, text: errorMessage(e) });
    } finally {
      await rules.refetch();
    }
  }

  /** After a write: the list (its kept copy was forgotten on the server) and the records read again. */
  async function reload() {
    await Promise.all([utils.account.tokens.invalidate(), utils.actions.records.invalidate(), rules.refetch()]);
  }

  async function toggle(token: TokenItem) {
    setNotice(null);
    try {
      const done = await setStatus.mutateAsync({ id: token.id, enabled: token.status !== "enabled" });
      setNotice(
        done.success ? { ok: true, text: `「${token.name}」${done.data.message}` } : { ok: false, text: done.message },
      );
      await reload();
    } catch (e) {
      setNotice({ ok: false, text: errorMessage(e) });
    }
  }

  async function confirmDelete(tokens: TokenItem[]) {
    setDeleteError("");
    try {
      const done = await remove.mutateAsync({ ids: tokens.map((t) => t.id) });
      if (!done.success) {
        setDeleteError(done.message);
        return;
      }
      const { deleted, failed } = done.data;
      setOpen(null);
      setSelected(new Set());
      setNotice(
        failed.length === 0
          ? { ok: true, text: `已删除 ${deleted} 个令牌` }
          : {
              ok: false,
              text: `已删除 ${deleted} 个，${failed.length} 个没有删除：${failed.map((f) => `#${f.id} ${f.message}`).join("；")}`,
            },
      );
      await reload();
    } catch (e) {
      setDeleteError(errorMessage(e));
    }
  }

  const pick = (id: number, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const chosen = items.filter((t) => selected.has(t.id));

  return (
    <section className="card" aria-labelledby="tokens-title">
      <div className="card-head">
        <h2 id="tokens-title">令牌</h2>
        <div className="bulk-actions">
          {chosen.length > 0 && (
            <button type="button" className="secondary" onClick={() => setOpen({ kind: "delete", tokens: chosen })}>
              删除所选（{chosen.length}）
            </button>
          )}
          <button type="button" className="secondary" onClick={() => setOpen({ kind: "export" })}>
            批量导出密钥
          </button>
          <button type="button" className="primary" disabled={!ruleData} onClick={() => setOpen({ kind: "create" })}>
            新建令牌
          </button>
          {answer.data && (
            <Freshness fetchedAt={answer.data.fetchedAt} busy={refreshing} onRefresh={refresh} cacheSeconds={15} />
          )}
        </div>
      </div>
      {notice && (
        <p className={notice.ok ? "notice" : "error"} role={notice.ok ? "status" : "alert"}>
          {notice.text}
        </p>
      )}
      {answer.loading ? (
        <Loading label="令牌" />
      ) : !answer.data ? (
        <Failed message={answer.message ?? ""} onRetry={refresh} />
      ) : items.length === 0 ? (
        <Empty>{input.page > 1 ? "这一页没有令牌" : "这个账户还没有令牌"}</Empty>
      ) : (
        <>
          <TableWrap label="令牌表格">
            <table className="table token-table">
              <thead>
                <tr>
                  <th>名称</th>
                  <th>密钥</th>
                  <th>状态</th>
                  <th className="num">剩余额度</th>
                  <th className="num">已用额度</th>
                  <th>过期时间</th>
                  <th>最近使用</th>
                  <th>操作</th>
                </tr>
              </thead>
              <tbody>
                {items.map((t) => (
                  <tr key={t.id}>
                    <td className="token-name">
                      <input
                        type="checkbox"
                        className="row-check"
                        checked={selected.has(t.id)}
                        onChange={(e) => pick(t.id, e.target.checked)}
                        aria-label={`选择令牌「${t.name}」`}
                      />{" "}
                      <span className="token-label" title={t.name || undefined}>
                        {t.name || "—"}
                      </span>
                      {t.group ? <span className="muted"> · {t.group}</span> : null}
                      {t.models.length > 0 && (
                        <span className="muted nowrap" title={t.models.join("、")}>
                          {" "}
                          · 限 {t.models.length} 个模型
                        </span>
                      )}
                    </td>
                    <td data-label="密钥" className="token-key">
                      <code>{t.key}</code>
                    </td>
                    <td data-label="状态">
                      <span className={`tag tag-${t.status}`}>{STATUS[t.status] ?? t.status}</span>
                    </td>
                    <td className="num" data-label="剩余额度">
                      {t.unlimited ? "无限" : t.remainQuota === null ? "未知" : moneyOf(t.remainQuota)}
                    </td>
                    <td className="num" data-label="已用额度">
                      {t.usedQuota === null ? "未知" : moneyOf(t.usedQuota)}
                    </td>
                    {/* A time may break between its day and its hour: the keys and actions keep their room. */}
                    <td className="token-time" data-label="过期时间">
                      {t.expiresAt ? <DayAndTime iso={t.expiresAt} /> : "永不过期"}
                    </td>
                    <td className="token-time" data-label="最近使用">
                      {t.lastUsedAt ? <DayAndTime iso={t.lastUsedAt} /> : "从未使用"}
                    </td>
                    <td className="token-actions">
                      <div className="row-actions">
                        <button
                          type="button"
                          className="ghost small"
                          disabled={!ruleData}
                          onClick={() => setOpen({ kind: "reveal", token: t })}
                          aria-label={`查看令牌「${t.name}」的密钥`}
                        >
                          密钥
                        </button>
                        <button
                          type="button"
                          className="ghost small"
                          disabled={!ruleData || reveal.isPending}
                          onClick={() => void copyKey(t)}
                          aria-label={`复制令牌「${t.name}」的地址和密钥`}
                          title="复制 Base URL 与 API Key"
                        >
                          复制
                        </button>
                        <button
                          type="button"
                          className="ghost small"
                          disabled={!ruleData}
                          onClick={() => setOpen({ kind: "edit", token: t })}
                          aria-label={`编辑令牌「${t.name}」`}
                        >
                          编辑
                        </button>
                        <button
                          type="button"
                          className="ghost small"
                          disabled={setStatus.isPending}
                          onClick={() => void toggle(t)}
                          aria-label={`${t.status === "enabled" ? "停用" : "启用"}令牌「${t.name}」`}
                        >
                          {t.status === "enabled" ? "停用" : "启用"}
                        </button>
                        <button
                          type="button"
                          className="ghost small danger-text"
                          disabled={!ruleData}
                          onClick={() => setOpen({ kind: "delete", tokens: [t] })}
                          aria-label={`删除令牌「${t.name}」`}
                        >
                          删除
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager of={answer.data} />
        </>
      )}
      {ruleData && (open?.kind === "create" || open?.kind === "edit") && (
        <TokenForm
          rules={ruleData}
          token={open.kind === "edit" ? open.token : null}
          onClose={() => setOpen(null)}
          onDone={(message, id, name) => {
            // A new key is shown on request at once (new-api answers a create without it).
            setOpen(open.kind === "create" && id !== null ? { kind: "reveal", token: { id, name } } : null);
            setNotice({ ok: true, text: message });
            void reload();
          }}
        />
      )}
      {open?.kind === "export" && <KeyExportDialog onClose={() => setOpen(null)} />}
      {ruleData && open?.kind === "reveal" && (
        <RevealDialog
          rules={ruleData}
          token={open.token}
          onClose={() => setOpen(null)}
          onSpent={() => void Promise.all([rules.refetch(), utils.actions.records.invalidate()])}
        />
      )}
      {ruleData && open?.kind === "delete" && (
        <DeleteDialog
          rules={ruleData}
          names={open.tokens.map((t) => t.name)}
          busy={remove.isPending}
          error={deleteError}
          onConfirm={() => void confirmDelete(open.tokens)}
          onClose={() => {
            setOpen(null);
            setDeleteError("");
          }}
        />
      )}
    </section>
  );
}
