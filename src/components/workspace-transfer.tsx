"use client";

import { useId, useState } from "react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { ErrorNote } from "./site-data";

type Outcome = RouterOutputs["workspace"]["importAccounts"]["data"]["outcomes"][number];

const RESULT: Record<Outcome["result"], string> = {
  saved: "已保存",
  updated: "已更新令牌",
  unregistered: "站点未注册",
  refused: "站点拒绝",
  skipped: "无法导入",
};

const FORMAT = { "all-api-hub": "All API Hub", metapi: "metapi" } as const;

/** What became of each account of a file (an import's or a restore's), in the words `names` gives. */
export function OutcomeList({
  label,
  outcomes,
  names,
}: {
  label: string;
  outcomes: Outcome[];
  names: Record<Outcome["result"], string>;
}) {
  return (
    <ul className="device-list" aria-label={label}>
      {outcomes.map((o, i) => (
        <li key={i}>
          <span className="who">
            <strong>{o.alias ?? o.siteName}</strong>
            <span className="muted">
              {o.siteUrl}
              {o.userId !== null ? ` · 用户ID ${o.userId}` : ""}
              {o.message ? ` · ${o.message}` : ""}
            </span>
          </span>
          <span className={`tag tag-${o.result === "saved" || o.result === "updated" ? "enabled" : "failed"}`}>
            {names[o.result]}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Bringing accounts in from All API Hub or metapi, and taking the list out (no token in it). */
export function WorkspaceTransfer() {
  const utils = trpc.useUtils();
  const fileId = useId();
  const importAccounts = trpc.workspace.importAccounts.useMutation();
  const [report, setReport] = useState<{ format: keyof typeof FORMAT; outcomes: Outcome[] } | null>(null);
  const [error, setError] = useState("");

  async function onFile(file: File | undefined) {
    setError("");
    setReport(null);
    if (!file) return;
    if (file.size > 4 * 1024 * 1024) {
      setError("文件超过 4 MiB，不像是账户备份");
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(await file.text());
    } catch {
      setError("这不是 JSON 文件：请选择 All API Hub 或 metapi 导出的备份");
      return;
    }
    try {
      const answer = await importAccounts.mutateAsync({ file: parsed });
      setReport(answer.data);
      await utils.invalidate();
    } catch (e) {
      setError(errorMessage(e));
    }
  }

  const saved = report?.outcomes.filter((o) => o.result === "saved" || o.result === "updated").length ?? 0;
  return (
    <section className="card" aria-labelledby="ws-transfer-title">
      <h2 id="ws-transfer-title">导入与导出</h2>
      <p className="muted">
        从浏览器插件 All API Hub 或 metapi 导出的 JSON
        备份导入账户：按站点地址匹配本服务登记的站点和本工作区的站点（都没有的先探测，再作为本工作区的站点添加），逐个向站点验证后保存，
        保留别名、标签、置顶与排序。
      </p>
      <div className="field">
        <label htmlFor={fileId}>备份文件</label>
        <input
          id={fileId}
          type="file"
          accept="application/json,.json"
          disabled={importAccounts.isPending}
          onChange={(e) => void onFile(e.target.files?.[0])}
        />
      </div>
      {importAccounts.isPending && (
        <p className="muted" role="status">
          正在逐个验证账户…
        </p>
      )}
      {report && (
        <div className="notice" role="status">
          <p>
            {FORMAT[report.format]} 备份中有 {report.outcomes.length} 个账户，已保存 {saved} 个。
          </p>
          <OutcomeList label="导入结果" outcomes={report.outcomes} names={RESULT} />
        </div>
      )}
      <ErrorNote message={error} />
      <div className="form-actions">
        <a className="button secondary" href="/api/workspace/accounts/export?format=csv" download>
          导出账户列表（CSV）
        </a>
        <a className="button secondary" href="/api/workspace/accounts/export?format=json" download>
          导出账户列表（JSON）
        </a>
      </div>
      <p className="muted">导出的列表不含任何令牌。</p>
    </section>
  );
}
