"use client";

import { useId, useState, type FormEvent } from "react";
import { checked, dataOf, errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { FAMILY_NAMES, formatLocal } from "./format";
import { Empty, ErrorNote } from "./site-data";

/**
 * The sites workspaces added themselves: each with its family and how many workspaces use it, an
 * address blocked (taken from every workspace, refused from then on) and blocks lifted.
 */
export function AdminWorkspaceSites({ onChanged }: { onChanged: () => void }) {
  const ids = { url: useId() };
  const utils = trpc.useUtils();
  const list = trpc.admin.workspaceSites.useQuery();
  const block = trpc.admin.blockSite.useMutation();
  const unblock = trpc.admin.unblockSite.useMutation();
  const [url, setUrl] = useState("");
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);

  async function run(work: () => Promise<string>) {
    setNote(null);
    try {
      setNote({ ok: true, text: await work() });
      await utils.admin.workspaceSites.invalidate();
      onChanged();
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  const onBlock = (event: FormEvent, address: string) => {
    event.preventDefault();
    void run(async () => {
      const { removed } = dataOf(await block.mutateAsync({ url: address }));
      setUrl("");
      return removed > 0 ? "已禁止该地址，并从使用它的工作区移除了这个站点" : "已禁止该地址";
    });
  };

  const data = list.data?.data;
  return (
    <section className="card" aria-labelledby="ws-sites-admin-title">
      <h2 id="ws-sites-admin-title">工作区添加的站点</h2>
      <p className="muted">
        工作区可以自行添加服务中没有的站点（只对添加它的工作区可见；环境变量 WORKSPACE_SITES 设置每个工作区的上限，0
        为关闭）。同一地址只有一个站点，共用请求额度。
      </p>
      {!data ? (
        <p className="state">{list.error ? errorMessage(list.error) : "正在读取…"}</p>
      ) : data.sites.length === 0 ? (
        <Empty>还没有工作区添加站点。</Empty>
      ) : (
        <div className="table-wrap" role="region" aria-label="工作区添加的站点表格" tabIndex={0}>
          <table className="table">
            <thead>
              <tr>
                <th>站点</th>
                <th>网关</th>
                <th className="num">工作区</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {data.sites.map((s) => (
                <tr key={s.id}>
                  <td>
                    <strong>{s.name}</strong>
                    <br />
                    <span className="muted">{s.url}</span>
                  </td>
                  <td>
                    {s.family ? (FAMILY_NAMES[s.family] ?? s.family) : "—"}
                    {s.version ? ` ${s.version}` : ""}
                  </td>
                  <td className="num">{s.workspaces}</td>
                  <td>
                    <button
                      type="button"
                      className="ghost"
                      disabled={block.isPending}
                      onClick={(e) => onBlock(e, s.url)}
                    >
                      禁止
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form className="form inline-form" aria-label="禁止地址" onSubmit={(e) => onBlock(e, url)}>
        <div className="field">
          <label htmlFor={ids.url}>禁止一个地址</label>
          <input
            id={ids.url}
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            placeholder="https://api.example.com"
            inputMode="url"
            spellCheck={false}
          />
        </div>
        <button type="submit" className="secondary" disabled={block.isPending}>
          禁止
        </button>
      </form>
      {data && data.blocked.length > 0 && (
        <ul className="device-list" aria-label="已禁止的地址">
          {data.blocked.map((b) => (
            <li key={b.url}>
              <span className="who">
                <strong>{b.url}</strong>
                <span className="muted">禁止于 {formatLocal(b.at)}</span>
              </span>
              <button
                type="button"
                className="ghost"
                disabled={unblock.isPending}
                onClick={() =>
                  void run(async () => {
                    checked(await unblock.mutateAsync({ url: b.url }));
                    return `已解除对 ${b.url} 的禁止`;
                  })
                }
              >
                解除禁止
              </button>
            </li>
          ))}
        </ul>
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
