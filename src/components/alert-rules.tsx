"use client";

import { useState, type FormEvent } from "react";
import { useRouter } from "next/navigation";
import { errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { KINDS, kindOf, ruleText, type Kind, type Rule } from "./alert-kinds";
import { ChannelChecks } from "./alert-channels";
import { Empty, Loading } from "./site-data";
import { browserZone } from "./usage-range";
import { nameOf } from "./workspace-accounts";

/** 提醒规则: the workspace's rules, each switched on or off, and the form that adds one. */
export function Rules() {
  const utils = trpc.useUtils();
  const rules = trpc.alerts.rules.useQuery();
  const channels = trpc.alerts.channels.useQuery();
  const accounts = trpc.workspace.accounts.useQuery();
  const create = trpc.alerts.createRule.useMutation();
  const update = trpc.alerts.updateRule.useMutation();
  const remove = trpc.alerts.removeRule.useMutation();
  const setZone = trpc.alerts.setTimeZone.useMutation();
  const [kind, setKind] = useState<Kind>("balance_below");
  const [account, setAccount] = useState("all");
  const [threshold, setThreshold] = useState("");
  const [step, setStep] = useState("");
  const [remind, setRemind] = useState(false);
  const [picked, setPicked] = useState<number[]>([]);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const accountList = accounts.data?.data.accounts ?? [];
  const channelList = channels.data?.data.channels ?? [];
  const accountName = (id: number | "all") =>
    id === "all"
      ? "全部账户"
      : (() => {
          const a = accountList.find((x) => x.id === id);
          return a ? nameOf(a) : `账户 #${id}`;
        })();
  const unit = kindOf(kind).unit;
  const here = browserZone();
  const router = useRouter();

  async function run(work: () => Promise<{ success: boolean; message?: string }>, done: string) {
    setNote(null);
    try {
      const answer = await work();
      setNote(answer.success ? { ok: true, text: done } : { ok: false, text: answer.message ?? "" });
      await utils.alerts.invalidate();
      return answer.success;
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
      return false;
    }
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const value = Number(threshold);
    if (unit && (threshold.trim() === "" || !Number.isFinite(value))) {
      setNote({ ok: false, text: `请填写数值（${unit}）` });
      return;
    }
    const ok = await run(
      () =>
        create.mutateAsync({
          kind,
          account: account === "all" ? "all" : Number(account),
          threshold: unit ? value : null,
          step: unit && step.trim() !== "" ? Number(step) : null,
          remind,
          channels: picked,
        }),
      "规则已添加",
    );
    if (ok) {
      setThreshold("");
      setStep("");
    }
  }

  const data = rules.data?.data;
  return (
    <section className="card" aria-labelledby="rules-title">
      <h2 id="rules-title">提醒规则</h2>
      {data && (
        <p className="muted">
          「今日」按 {data.timeZone} 计算。
          {data.timeZone !== here && (
            <button
              type="button"
              className="ghost small"
              onClick={() =>
                void run(() => setZone.mutateAsync({ timeZone: here }), `已改为 ${here}`).then(
                  // The page's times are in the workspace's zone: drawn again in the new one.
                  (done) => done && router.refresh(),
                )
              }
            >
              改为本机时区（{here}）
            </button>
          )}
        </p>
      )}
      {rules.isPending ? (
        <Loading label="规则" />
      ) : !data || data.rules.length === 0 ? (
        <Empty>还没有规则。</Empty>
      ) : (
        <ul className="rule-list" aria-label="规则">
          {data.rules.map((r: Rule) => (
            <li key={r.id} className="rule-item">
              <span>
                <strong>{ruleText(r)}</strong>
                <span className="muted">
                  {" "}
                  · {accountName(r.account)} ·{" "}
                  {r.channels.length === 0
                    ? "只在本页显示"
                    : `通知：${r.channels.map((c) => channelList.find((x) => x.id === c)?.name ?? `#${c}`).join("、")}`}
                  {r.step !== null ? ` · 加重 ${r.step} 时再通知` : ""}
                  {r.remind ? " · 每日提醒" : ""}
                </span>
              </span>
              <span className="rule-actions">
                <label className="inline">
                  <input
                    type="checkbox"
                    checked={!r.muted}
                    onChange={(e) =>
                      void run(
                        () => update.mutateAsync({ id: r.id, muted: !e.target.checked }),
                        e.target.checked ? "规则已启用" : "规则已暂停",
                      )
                    }
                  />{" "}
                  启用
                </label>
                <button
                  type="button"
                  className="ghost small"
                  aria-label={`删除规则：${ruleText(r)}`}
                  onClick={() => void run(() => remove.mutateAsync({ id: r.id }), "规则已删除")}
                >
                  删除
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <form className="rule-form" onSubmit={(e) => void submit(e)} aria-label="添加规则">
        <label className="field">
          <span>条件</span>
          <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        {unit && (
          <label className="field">
            <span>数值（{unit}）</span>
            <input
              inputMode="decimal"
              value={threshold}
              onChange={(e) => setThreshold(e.target.value)}
              placeholder={kindOf(kind).hint}
            />
          </label>
        )}
        <label className="field">
          <span>账户</span>
          <select value={account} onChange={(e) => setAccount(e.target.value)}>
            <option value="all">全部账户</option>
            {accountList.map((a) => (
              <option key={a.id} value={a.id}>
                {nameOf(a)}（{a.siteName ?? "已移除的站点"}）
              </option>
            ))}
          </select>
        </label>
        {unit && (
          <label className="field">
            <span>加重多少时再通知（可选）</span>
            <input
              inputMode="decimal"
              value={step}
              onChange={(e) => setStep(e.target.value)}
              placeholder={`同单位（${unit}）`}
            />
          </label>
        )}
        <ChannelChecks
          legend="通知渠道"
          channels={channelList}
          picked={picked}
          onChange={setPicked}
          none="还没有渠道：提醒只在本页显示。可在下方添加渠道。"
        />
        <label className="check">
          <input type="checkbox" checked={remind} onChange={(e) => setRemind(e.target.checked)} /> 持续期间每天提醒一次
        </label>
        <button type="submit" className="primary" disabled={create.isPending}>
          添加规则
        </button>
      </form>
      {note && (
        <p className={note.ok ? "notice" : "error"} role={note.ok ? "status" : "alert"}>
          {note.text}
        </p>
      )}
    </section>
  );
}
