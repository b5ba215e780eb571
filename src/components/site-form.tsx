"use client";

import { useState, type FormEvent } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { FAMILY_NAMES, formatNumber } from "./format";

export type Finding =
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
      {finding.systemName ? ` · ${finding.systemName}` : ""} · 每美元 {formatNumber(finding.quotaPerUnit)} 额度
    </span>
  ) : (
    <span className="failed-text">无法访问：{finding.error}</span>
  );
}

export type FormValues = { name: string; url: string; budget: string };

/** The add and edit form: probed on save; an unreachable site needs 仍然保存. */
export function SiteForm({
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
  ) => Promise<{
    ok: boolean;
    message?: string;
    notice?: string;
    finding?: Finding | null;
    needsConfirmation?: boolean;
  }>;
  onCancel?: () => void;
}) {
  const [values, setValues] = useState(initial);
  const [confirm, setConfirm] = useState(false);
  const [sameGateway, setSameGateway] = useState(false);
  // Editing a saved site's address is a move (the add form starts empty).
  const moving = onCancel !== undefined && values.url.trim() !== initial.url;
  const [pending, setPending] = useState(false);
  const [message, setMessage] = useState("");
  const [notice, setNotice] = useState("");
  const [finding, setFinding] = useState<Finding | null>(null);
  const [needsConfirmation, setNeedsConfirmation] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setNotice("");
    // Said here in words: a budget that is not a whole number in range is never saved as something else.
    const budget = values.budget.trim();
    if (budget !== "" && !(/^\d{1,6}$/.test(budget) && Number(budget) >= 1 && Number(budget) <= MAX_BUDGET)) {
      setMessage(`每分钟请求数应为 1 到 ${MAX_BUDGET} 之间的整数；留空则使用默认值`);
      return;
    }
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
      setNotice(result.notice ?? "");
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
      {notice && (
        <p className="notice" role="status">
          {notice}
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

/** The largest per-minute budget a site may be given (the service refuses more). */
const MAX_BUDGET = 100_000;

export const budgetOf = (text: string): number | null => (text.trim() === "" ? null : Number(text.trim()));

/** What a save says when the site was saved while it could not be reached. */
export const savedUnreachable = (finding: Finding | null | undefined) =>
  finding && !finding.reachable
    ? "已保存，但站点现在无法访问：用户要等它恢复后才能登录。请确认地址无误，稍后可点「探测」再试。"
    : "";

/** A refused add or edit as the form shows it: the message, what the probe found, whether to confirm. */
export function refusal(answer: { message: string }) {
  return {
    ok: false,
    message: answer.message,
    finding: "probe" in answer ? (answer.probe as Finding) : null,
    needsConfirmation: "needsConfirmation" in answer,
  };
}
