"use client";

import { useState } from "react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { CopyButton, InlineTabs, Modal } from "./modal";
import { Failed, Loading } from "./site-data";

type Exported = RouterOutputs["tokens"]["exportKeys"]["data"];

/** A text offered as a download (the .env or JSON of the keys), made in the browser. */
function download(name: string, text: string, type: string) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}

const EXPORT_TABS = [
  ["env", ".env"],
  ["json", "JSON"],
  ["ccswitch", "CC Switch"],
  ["cherry", "Cherry Studio"],
] as const;

/** What an export gave: the keys for each client, and the ones it could not get, with why. */
function ExportResult({ result }: { result: Exported }) {
  const [tab, setTab] = useState<"env" | "json" | "ccswitch" | "cherry">("env");
  return (
    <div className="form">
      <p role="status">
        已取得 {result.keys.length} 个密钥{result.failed.length > 0 ? `，${result.failed.length} 个未取得` : ""}
        。密钥只在这里显示，本服务不保存它们。
      </p>
      {result.failed.length > 0 && (
        <ul className="device-list" aria-label="未取得的密钥">
          {result.failed.map((f, i) => (
            <li key={i}>
              <span className="who">
                <strong>
                  {f.accountName}
                  {f.tokenId !== null ? ` · 令牌 #${f.tokenId}` : ""}
                </strong>
                <span className="error-text">{f.message}</span>
              </span>
            </li>
          ))}
        </ul>
      )}
      <InlineTabs label="导出格式" tabs={EXPORT_TABS} value={tab} onChange={setTab} />
      {(tab === "env" || tab === "json") && (
        <div className="export-box" role="tabpanel" aria-label={tab === "env" ? ".env" : "JSON"}>
          <pre className="mono">{tab === "env" ? result.env : result.json}</pre>
          <div className="modal-actions">
            <CopyButton text={tab === "env" ? result.env : result.json} label="复制" />
            <button
              type="button"
              className="secondary"
              onClick={() =>
                tab === "env"
                  ? download("keys.env", result.env, "text/plain")
                  : download("keys.json", result.json, "application/json")
              }
            >
              下载
            </button>
          </div>
        </div>
      )}
      {(tab === "ccswitch" || tab === "cherry") && (
        <ul className="device-list" role="tabpanel" aria-label={tab === "ccswitch" ? "CC Switch" : "Cherry Studio"}>
          {result.keys.map((k) => (
            <li key={`${k.account}/${k.tokenId}`}>
              <span className="who">
                <strong>{k.tokenName}</strong>
                <span className="muted">{k.accountName}</span>
              </span>
              {tab === "ccswitch" ? (
                <span className="row-actions">
                  <a className="button secondary small" href={k.ccSwitch.claude}>
                    Claude Code
                  </a>
                  <a className="button ghost small" href={k.ccSwitch.codex}>
                    Codex
                  </a>
                </span>
              ) : (
                <a className="button secondary small" href={k.cherryStudio}>
                  在 Cherry Studio 中添加
                </a>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * 批量导出密钥: every account's tokens to choose from (keys masked), the chosen keys revealed at
 * once and written out for the clients.
 */
export function KeyExportDialog({ onClose }: { onClose: () => void }) {
  const list = trpc.tokens.everyAccount.useQuery();
  const exportKeys = trpc.tokens.exportKeys.useMutation();
  const utils = trpc.useUtils();
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [result, setResult] = useState<Exported | null>(null);
  const [error, setError] = useState("");
  const id = (account: string, token: number) => `${account}/${token}`;
  const toggle = (key: string, on: boolean) =>
    setChosen((s) => {
      const next = new Set(s);
      if (on) next.add(key);
      else next.delete(key);
      return next;
    });

  async function run() {
    setError("");
    const byAccount = new Map<string, number[]>();
    for (const key of chosen) {
      const [account = "", token = ""] = key.split("/");
      byAccount.set(account, [...(byAccount.get(account) ?? []), Number(token)]);
    }
    try {
      const answer = await exportKeys.mutateAsync({
        keys: [...byAccount.entries()].map(([account, ids]) => ({ account, ids })),
      });
      setResult(answer.data);
      await utils.actions.records.invalidate();
    } catch (e) {
      setError(errorMessage(e));
    }
  }

  const accounts = list.data?.data.accounts ?? [];
  const enabled = accounts.flatMap((a) =>
    (a.tokens ?? []).filter((t) => t.status === "enabled").map((t) => id(a.account, t.id)),
  );
  return (
    <Modal title="批量导出密钥" onClose={onClose}>
      {result ? (
        <ExportResult result={result} />
      ) : list.isPending ? (
        <Loading label="令牌" />
      ) : list.error ? (
        <Failed message={errorMessage(list.error)} onRetry={() => void list.refetch()} />
      ) : (
        <div className="form">
          <p className="muted">
            选择各账户的令牌，一次取得完整密钥（每个都记入该账户的操作记录；new-api 站点每 20 分钟至多查看 20 次密钥）。
          </p>
          <div className="modal-actions">
            <button type="button" className="ghost small" onClick={() => setChosen(new Set(enabled))}>
              选择全部启用的（{enabled.length}）
            </button>
            <button type="button" className="ghost small" onClick={() => setChosen(new Set())}>
              清除
            </button>
          </div>
          <div className="key-export-list">
            {accounts.map((a) => (
              <fieldset key={a.account} className="field">
                <legend>{a.name}</legend>
                {a.tokens === null ? (
                  <span className="error-text">{a.message}</span>
                ) : a.tokens.length === 0 ? (
                  <span className="muted">没有令牌</span>
                ) : (
                  a.tokens.map((t) => (
                    <label key={t.id} className="check">
                      <input
                        type="checkbox"
                        checked={chosen.has(id(a.account, t.id))}
                        onChange={(e) => toggle(id(a.account, t.id), e.target.checked)}
                      />{" "}
                      {t.name || `#${t.id}`} <code className="muted">{t.key}</code>
                      {t.status !== "enabled" ? (
                        <span className="muted">（{t.status === "disabled" ? "已禁用" : "不可用"}）</span>
                      ) : null}
                    </label>
                  ))
                )}
              </fieldset>
            ))}
          </div>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <div className="modal-actions">
            <button
              type="button"
              className="primary"
              disabled={chosen.size === 0 || exportKeys.isPending}
              onClick={() => void run()}
            >
              {exportKeys.isPending ? "正在取得密钥…" : `导出所选（${chosen.size}）`}
            </button>
            <button type="button" className="secondary" onClick={onClose}>
              取消
            </button>
          </div>
        </div>
      )}
    </Modal>
  );
}
