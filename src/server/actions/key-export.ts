/**
 * Keys in bulk (docs/design.md 26): the full keys of tokens chosen across accounts (or every
 * enabled token of each), each revealed as 显示密钥 reveals one (in 操作记录, within the site's
 * budget of reveals), and written out for the clients people use: a `.env` list, JSON, CC Switch's
 * and Cherry Studio's import links. A key that cannot be had is listed with the reason; the others
 * are still given.
 */
import pLimit from "p-limit";
import { Refusal } from "../core/errors";
import type { Db } from "../db/client";
import type { Account, SiteDataDeps } from "../site-data/calls";
import { tokens } from "../site-data/site-data";
import type { Actor } from "./records";
import { revealToken } from "./tokens";
import { commentText, envLine } from "./client-config";

/** One account's part of an export: its key (`siteId:siteUserId`), name, and the token ids (or all enabled). */
export type KeyTarget = { key: string; name: string; account: Account; actor: Actor; ids: number[] | "all" };

export type ExportedKey = {
  account: string;
  accountName: string;
  tokenId: number;
  tokenName: string;
  baseUrl: string;
  key: string;
  ccSwitch: { claude: string; codex: string };
  cherryStudio: string;
};

export type KeyFailure = { account: string; accountName: string; tokenId: number | null; message: string };

/** The most keys one export reveals (a site's reveals are budgeted: new-api allows 20 per 20 minutes). */
const MAX_EXPORT_KEYS = 50;

const v1 = (url: string) => `${url.replace(/\/+$/, "")}/v1`;

async function idsOf(target: KeyTarget, deps: SiteDataDeps): Promise<number[]> {
  if (target.ids !== "all") return target.ids;
  const page = await tokens(target.account, { page: 1, pageSize: 100 }, deps);
  return page.items.filter((t) => t.status === "enabled").map((t) => t.id);
}

export async function exportKeys(
  db: Db,
  targets: KeyTarget[],
  deps: SiteDataDeps,
): Promise<{ keys: ExportedKey[]; failed: KeyFailure[] }> {
  const keys: ExportedKey[] = [];
  const failed: KeyFailure[] = [];
  const planned: { target: KeyTarget; id: number }[] = [];
  for (const target of targets) {
    const base = { account: target.key, accountName: target.name };
    try {
      for (const id of await idsOf(target, deps)) planned.push({ target, id });
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      failed.push({ ...base, tokenId: null, message: error.message });
    }
  }
  if (planned.length > MAX_EXPORT_KEYS) {
    throw new Refusal(`一次最多导出 ${MAX_EXPORT_KEYS} 个密钥，这次选了 ${planned.length} 个`, "BAD_REQUEST");
  }
  // One site's reveals one after another (its budget), sites side by side.
  const bySite = new Map<number, typeof planned>();
  for (const p of planned) bySite.set(p.target.account.siteId, [...(bySite.get(p.target.account.siteId) ?? []), p]);
  const limit = pLimit(4);
  const found = new Map<string, ExportedKey>();
  await Promise.all(
    [...bySite.values()].map((list) =>
      limit(async () => {
        for (const { target, id } of list) {
          const base = { account: target.key, accountName: target.name };
          try {
            const shown = await revealToken(db, target.account, target.actor, id, deps);
            found.set(`${target.key}/${id}`, {
              ...base,
              tokenId: id,
              tokenName: shown.name,
              baseUrl: shown.baseUrl,
              key: shown.key,
              ccSwitch: shown.exports.ccSwitch,
              cherryStudio: shown.exports.cherryStudio.link,
            });
          } catch (error) {
            if (!(error instanceof Refusal)) throw error;
            failed.push({ ...base, tokenId: id, message: error.message });
          }
        }
      }),
    ),
  );
  // In the order chosen.
  for (const { target, id } of planned) {
    const key = found.get(`${target.key}/${id}`);
    if (key) keys.push(key);
  }
  return { keys, failed };
}

/** The keys as a `.env` file: a named pair per key, the first also as the OpenAI SDKs' own names. */
export function keysEnv(keys: ExportedKey[]): string {
  const lines = keys.flatMap((k, i) => [
    `# ${commentText(`${k.accountName} · ${k.tokenName}`)}`,
    envLine(`KEY_${i + 1}_BASE_URL`, v1(k.baseUrl)),
    envLine(`KEY_${i + 1}_API_KEY`, k.key),
  ]);
  const first = keys[0];
  const head = first ? [envLine("OPENAI_BASE_URL", v1(first.baseUrl)), envLine("OPENAI_API_KEY", first.key), ""] : [];
  return `${[...head, ...lines].join("\n")}\n`;
}

/** The keys as JSON: what a script or another tool takes. */
export function keysJson(keys: ExportedKey[]): string {
  return JSON.stringify(
    keys.map((k) => ({ account: k.accountName, token: k.tokenName, baseUrl: v1(k.baseUrl), apiKey: k.key })),
    null,
    2,
  );
}
