"use client";

import { useId, useState, type FormEvent } from "react";
import { errorMessage, refused, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { ErrorNote } from "./site-data";
import { OutcomeList } from "./workspace-transfer";

type Restored = RouterOutputs["workspace"]["restore"]["data"];

const RESULT: Record<Restored["outcomes"][number]["result"], string> = {
  saved: "已恢复",
  updated: "已更新令牌",
  unregistered: "站点不可用",
  refused: "站点拒绝",
  skipped: "无法恢复",
};

/** A text field of a form, as typed. */
const field = (data: FormData, name: string): string => {
  const value = data.get(name);
  return typeof value === "string" ? value : "";
};

/** The REST answer's message when a download was refused (a JSON failure instead of the file). */
async function failureOf(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { message?: string };
    return body.message ?? `下载失败（HTTP ${res.status}）`;
  } catch {
    return `下载失败（HTTP ${res.status}）`;
  }
}

/**
 * 完整备份 of the workspace tab: every account with its token, settings and alerts in one file
 * encrypted with a passphrase the person chooses; and a restore of such a file into a workspace
 * that has no account yet.
 */
export function WorkspaceBackup() {
  const ids = { password: useId(), passphrase: useId(), repeat: useId(), file: useId(), restorePass: useId() };
  const utils = trpc.useUtils();
  const restore = trpc.workspace.restore.useMutation();
  const list = trpc.workspace.accounts.useQuery();
  const accounts = list.data?.data.accounts.length ?? null;
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [file, setFile] = useState<File | null>(null);
  const [report, setReport] = useState<Restored | null>(null);

  async function onBackup(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const [password, passphrase, repeat] = ["password", "passphrase", "repeat"].map((k) => field(data, k));
    setNote(null);
    if (passphrase !== repeat) {
      setNote({ ok: false, text: "两次输入的备份密码不一致" });
      return;
    }
    setBusy(true);
    try {
      const res = await fetch("/api/workspace/backup", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ password, passphrase }),
      });
      const disposition = res.headers.get("content-disposition") ?? "";
      if (!res.ok || !disposition.startsWith("attachment")) throw refused(await failureOf(res));
      const name = /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1] ?? "workspace-backup.json";
      const link = document.createElement("a");
      link.href = URL.createObjectURL(await res.blob());
      link.download = decodeURIComponent(name);
      link.click();
      URL.revokeObjectURL(link.href);
      form.reset();
      setNote({ ok: true, text: "备份已下载。请记住备份密码：没有它无法恢复，本服务也不保存它。" });
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  }

  async function onRestore(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const passphrase = field(new FormData(event.currentTarget), "restorePass");
    setNote(null);
    setReport(null);
    if (!file) {
      setNote({ ok: false, text: "请选择备份文件" });
      return;
    }
    if (file.size > 4 * 1024 * 1024) {
      setNote({ ok: false, text: "文件超过 4 MiB，不像是工作区备份" });
      return;
    }
    try {
      const answer = await restore.mutateAsync({ file: await file.text(), passphrase });
      setReport(answer.data);
      await utils.invalidate();
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  const restored = report?.outcomes.filter((o) => o.result === "saved" || o.result === "updated").length ?? 0;
  return (
    <section className="card" aria-labelledby="ws-backup-title">
      <h2 id="ws-backup-title">完整备份</h2>
      <p className="muted">
        把整个工作区（全部账户及其访问令牌、别名、标签、置顶、排序、自动签到，提醒的时区、渠道、规则和摘要）下载为一个用备份密码加密的文件，
        可以在任何一台本服务上恢复到新的工作区。文件采用 All API Hub 的加密格式。
      </p>
      <form className="form" aria-label="下载备份" onSubmit={(e) => void onBackup(e)}>
        <div className="field">
          <label htmlFor={ids.password}>工作区密码</label>
          <input id={ids.password} name="password" type="password" autoComplete="current-password" required />
        </div>
        <div className="field">
          <label htmlFor={ids.passphrase}>备份密码</label>
          <input
            id={ids.passphrase}
            name="passphrase"
            type="password"
            autoComplete="new-password"
            minLength={8}
            required
          />
          <p className="hint">至少 8 个字符；恢复时需要，忘记后无法找回。</p>
        </div>
        <div className="field">
          <label htmlFor={ids.repeat}>再输入一次备份密码</label>
          <input id={ids.repeat} name="repeat" type="password" autoComplete="new-password" required />
        </div>
        <button type="submit" className="primary" disabled={busy || accounts === 0}>
          {busy ? "正在生成…" : "下载加密备份"}
        </button>
      </form>
      {accounts === 0 && !report && (
        <form className="form" aria-label="从备份恢复" onSubmit={(e) => void onRestore(e)}>
          <h3>从备份恢复</h3>
          <p className="muted">本工作区还没有账户，可以从备份恢复：每个账户先经站点验证再保存。</p>
          <div className="field">
            <label htmlFor={ids.file}>备份文件</label>
            <input
              id={ids.file}
              type="file"
              accept="application/json,.json"
              onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            />
          </div>
          <div className="field">
            <label htmlFor={ids.restorePass}>备份密码</label>
            <input id={ids.restorePass} name="restorePass" type="password" autoComplete="off" required />
          </div>
          <button type="submit" className="primary" disabled={restore.isPending}>
            {restore.isPending ? "正在逐个验证账户…" : "恢复"}
          </button>
        </form>
      )}
      {report && (
        <div className="notice" role="status">
          <p>
            备份中有 {report.outcomes.length} 个账户，已恢复 {restored} 个；通知渠道 {report.alerts.channels}{" "}
            个、提醒规则 {report.alerts.rules} 条、摘要 {report.alerts.digests} 个。
          </p>
          <OutcomeList label="恢复结果" outcomes={report.outcomes} names={RESULT} />
        </div>
      )}
      {note?.ok ? (
        <p className="notice" role="status">
          {note.text}
        </p>
      ) : (
        <ErrorNote message={note?.text ?? ""} />
      )}
    </section>
  );
}
