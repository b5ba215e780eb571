"use client";

import Link from "next/link";
import { useId, useState, type FormEvent } from "react";
import { checked, dataOf, errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { FAMILY_NAMES, formatLocal } from "./format";
import { Empty, ErrorNote, Failed, Loading } from "./site-data";

type Finding = Extract<RouterOutputs["workspace"]["probeSite"], { success: true }>["data"];

/** How the site shows money, in words. */
const SHOWN: Record<string, string> = {
  USD: "按美元显示",
  CNY: "按人民币显示",
  CUSTOM: "按自定义货币显示",
  TOKENS: "按额度显示",
};

/** What a probe found, said before anything is saved. */
function FindingNote({ finding }: { finding: Finding }) {
  const { money } = finding;
  return (
    <dl className="site-finding" aria-label="探测结果">
      <dt>名称</dt>
      <dd>{finding.name}</dd>
      <dt>网关</dt>
      <dd>
        {FAMILY_NAMES[finding.family] ?? finding.family}
        {finding.version ? ` ${finding.version}` : ""}
      </dd>
      <dt>金额</dt>
      <dd>
        {SHOWN[money.display] ?? money.display}
        {money.display === "CNY" || money.display === "CUSTOM" ? `（${money.symbol}，1 美元 = ${money.rate}）` : ""}
        ；每美元 {money.quotaPerUnit.toLocaleString("en-US")} 额度
      </dd>
      <dt>响应</dt>
      <dd>{finding.ms} ms</dd>
    </dl>
  );
}

/**
 * 站点 of the workspace tab: the sites it added itself (for it alone), and adding one by its
 * address, probed first and saved only when the person has seen what it is.
 */
export function WorkspaceSites() {
  const ids = { url: useId() };
  const utils = trpc.useUtils();
  const list = trpc.workspace.sites.useQuery();
  const probe = trpc.workspace.probeSite.useMutation();
  const add = trpc.workspace.addSite.useMutation();
  const remove = trpc.workspace.removeSite.useMutation();
  const [url, setUrl] = useState("");
  const [finding, setFinding] = useState<Finding | null>(null);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);

  if (list.isPending) return <Loading label="站点" />;
  if (list.error) return <Failed message={errorMessage(list.error)} onRetry={() => void list.refetch()} />;
  const { own, limit } = list.data.data;

  async function onProbe(event: FormEvent) {
    event.preventDefault();
    setNote(null);
    setFinding(null);
    try {
      setFinding(dataOf(await probe.mutateAsync({ url })));
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  async function onAdd(found: Finding) {
    setNote(null);
    try {
      const { site } = dataOf(await add.mutateAsync({ url: found.url }));
      setFinding(null);
      setUrl("");
      setNote({ ok: true, text: `已添加「${site.name}」，现在可以在这个站点上添加账户了` });
      await utils.workspace.sites.invalidate();
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  async function onRemove(id: number) {
    setNote(null);
    try {
      checked(await remove.mutateAsync({ id }));
      await utils.workspace.sites.invalidate();
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  return (
    <section className="card" aria-labelledby="ws-sites-title">
      <h2 id="ws-sites-title">站点</h2>
      {limit === 0 ? (
        <p className="muted">本服务未开放自行添加站点：可用的站点由管理员登记。</p>
      ) : (
        <>
          <p className="muted">
            服务中没有的站点可以在这里添加：只有本工作区能看到和使用它（最多 {limit} 个）。添加前会先读取站点的
            /api/status，确认它是哪种网关。
          </p>
          {own.length === 0 ? (
            <Empty>还没有自行添加的站点。</Empty>
          ) : (
            <ul className="device-list" aria-label="自行添加的站点">
              {own.map((s) => (
                <li key={s.id}>
                  <span className="who">
                    <strong>{s.name}</strong>
                    <span className="muted">
                      {s.url} · 添加于 {formatLocal(s.addedAt)}
                    </span>
                  </span>
                  <button
                    type="button"
                    className="ghost"
                    disabled={remove.isPending}
                    onClick={() => void onRemove(s.id)}
                  >
                    移除
                  </button>
                </li>
              ))}
            </ul>
          )}
          <form className="form" aria-label="添加站点" onSubmit={(e) => void onProbe(e)}>
            <div className="field">
              <label htmlFor={ids.url}>站点地址</label>
              <input
                id={ids.url}
                value={url}
                onChange={(e) => {
                  setUrl(e.target.value);
                  setFinding(null);
                }}
                placeholder="https://api.example.com"
                inputMode="url"
                autoComplete="off"
                spellCheck={false}
              />
            </div>
            <button type="submit" className="secondary" disabled={probe.isPending}>
              {probe.isPending ? "正在探测…" : "探测站点"}
            </button>
          </form>
          {finding && (
            <div className="site-found">
              <FindingNote finding={finding} />
              <button type="button" className="primary" disabled={add.isPending} onClick={() => void onAdd(finding)}>
                添加到工作区
              </button>
            </div>
          )}
        </>
      )}
      {note?.ok ? (
        <p className="notice" role="status">
          {note.text} <Link href="/?add=1">添加账户</Link>
        </p>
      ) : (
        <ErrorNote message={note?.text ?? ""} />
      )}
    </section>
  );
}
