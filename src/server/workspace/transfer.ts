/**
 * Moving accounts in and out of a workspace (docs/design.md 17). In: an All API Hub backup (its V2
 * `{version, timestamp, accounts: {accounts, pinnedAccountIds, orderedAccountIds}, tagStore}`, a
 * partial `type: "accounts"` one, or a V1 file with `accounts.accounts` / `data.accounts`) or a
 * metapi backup (`accounts: {sites, accounts}`, the site user id in each account's `extraConfig`
 * as `platformUserId`). Each account keeps its name as the alias and its tags, pinned, left out
 * of totals and order; each is verified with its site before it is saved. Accounts whose site is
 * not registered here, or that cannot be verified, are listed with the reason, never dropped
 * silently. Out: the account list without tokens, as JSON or CSV.
 */
import pLimit from "p-limit";
import { csvRecord, neutralize } from "../core/csv";
import { Refusal } from "../core/errors";
import type { Db } from "../db/client";
import { credentialOf } from "../session/possession";
import { env } from "../core/env";
import type { ProbeOptions } from "../sites/probe";
import { siteRegistry } from "../sites/registry";
import { workspaceSites } from "../sites/workspace-sites";
import { MAX_WORKSPACE_ACCOUNTS, type SavedAccount, type SavedAccounts } from "./saved-accounts";

/** One account found in a backup file, before it is matched to a site and verified. */
export type ImportCandidate = {
  siteUrl: string;
  siteName: string;
  userId: number | null;
  accessToken: string;
  alias: string | null;
  tags: string[];
  pinned: boolean;
  excluded: boolean;
  /** Why it cannot be imported whatever the site says (another way of signing in). */
  unsupported: string | null;
};

export type ImportFormat = "all-api-hub" | "metapi";

export type ImportOutcome = {
  siteUrl: string;
  siteName: string;
  userId: number | null;
  alias: string | null;
  result: "saved" | "updated" | "unregistered" | "refused" | "skipped";
  message: string | null;
  accountId: number | null;
};

const TRANSFER_MSG = {
  unknown: "无法识别的备份文件：请选择 All API Hub 或 metapi 导出的 JSON 文件",
  empty: "备份文件中没有账户",
  tooMany: `一次最多导入 ${MAX_WORKSPACE_ACCOUNTS} 个账户`,
  unregistered: "该站点尚未在本服务注册，请管理员先添加站点",
  noUserId: "备份中缺少该账户的用户 ID",
  noToken: "备份中缺少该账户的访问令牌",
  cookie: "该账户在原工具中以 Cookie 方式登录，请改用系统访问令牌手动添加",
  duplicate: "备份文件中该账户重复出现，只导入了第一个",
  unchanged: "令牌与工作区保存的相同，无需重新验证",
} as const;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === "string" ? v.trim() : "");
const positiveInt = (v: unknown): number | null => {
  const n = typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : v;
  return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : null;
};
const stringArray = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];

/** A site address as compared: scheme and host lower-cased, no trailing slash, no query. */
export function comparableSiteUrl(raw: string): string | null {
  try {
    const url = new URL(raw.trim());
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`.toLowerCase();
  } catch {
    return null;
  }
}

/** All API Hub: the accounts of a V2 (full or partial) or V1 backup. */
function fromAllApiHub(data: Record<string, unknown>): ImportCandidate[] | null {
  const section = isRecord(data.accounts) ? data.accounts : isRecord(data.data) ? data.data : null;
  const list = Array.isArray(section?.accounts)
    ? section.accounts
    : Array.isArray(data.accounts)
      ? data.accounts
      : null;
  if (!list) return null;
  // Caps before work: a file of more accounts than a workspace holds is refused before it is read.
  if (list.length > MAX_WORKSPACE_ACCOUNTS) throw new Refusal(TRANSFER_MSG.tooMany, "BAD_REQUEST");
  const tagNames = tagNamesOf(data);
  const pinned = new Set(stringArray(section?.pinnedAccountIds));
  const ordered = new Map<string, number>();
  for (const id of stringArray(section?.orderedAccountIds)) if (!ordered.has(id)) ordered.set(id, ordered.size);
  const rows = list.filter(isRecord).filter((row) => text(row.site_url) !== "");
  // The person's order first (ids listed), the rest as the file has them.
  const ranked = rows.map((row, i) => ({ row, rank: ordered.get(text(row.id)) ?? ordered.size + i }));
  return ranked.sort((a, b) => a.rank - b.rank).map(({ row }) => hubCandidate(row, tagNames, pinned));
}

/** The names of an All API Hub file's tags, by id. */
export function tagNamesOf(data: Record<string, unknown>): Map<string, string> {
  const tagNames = new Map<string, string>();
  const tagStore = isRecord(data.tagStore) && isRecord(data.tagStore.tagsById) ? data.tagStore.tagsById : {};
  for (const [id, tag] of Object.entries(tagStore))
    if (isRecord(tag) && text(tag.name)) tagNames.set(id, text(tag.name));
  return tagNames;
}

/** One account of an All API Hub file as a candidate: its name as the alias, its tags, pinned and left out of totals. */
export function hubCandidate(
  row: Record<string, unknown>,
  tagNames: Map<string, string>,
  pinned: Set<string>,
): ImportCandidate {
  const info = isRecord(row.account_info) ? row.account_info : {};
  const authType = text(row.authType) || "access_token";
  const tags = [
    ...stringArray(row.tagIds).flatMap((id) => (tagNames.has(id) ? [tagNames.get(id) as string] : [])),
    ...stringArray(row.tags),
  ];
  return {
    siteUrl: text(row.site_url),
    siteName: text(row.site_name),
    userId: positiveInt(info.id),
    accessToken: text(info.access_token),
    alias: text(row.site_name) || null,
    tags: [...new Set(tags.map((t) => t.trim()).filter(Boolean))],
    pinned: pinned.has(text(row.id)),
    excluded: row.excludeFromTotalBalance === true,
    unsupported: authType === "access_token" ? null : TRANSFER_MSG.cookie,
  };
}

/** metapi: its sites and accounts tables; the site user id lives in the account's extraConfig. */
function fromMetapi(data: Record<string, unknown>): ImportCandidate[] | null {
  const section = isRecord(data.accounts) ? data.accounts : null;
  if (!section || !Array.isArray(section.sites) || !Array.isArray(section.accounts)) return null;
  const sites = new Map<number, { url: string; name: string }>();
  for (const site of section.sites.filter(isRecord)) {
    const id = positiveInt(site.id);
    if (id !== null) sites.set(id, { url: text(site.url), name: text(site.name) });
  }
  if (section.accounts.length > MAX_WORKSPACE_ACCOUNTS) throw new Refusal(TRANSFER_MSG.tooMany, "BAD_REQUEST");
  const rows = section.accounts.filter(isRecord);
  const order = (row: Record<string, unknown>) => (typeof row.sortOrder === "number" ? row.sortOrder : 0);
  return [...rows]
    .sort((a, b) => order(a) - order(b))
    .flatMap((row) => {
      const site = sites.get(positiveInt(row.siteId) ?? -1);
      if (!site?.url) return [];
      let extra: Record<string, unknown> = {};
      try {
        const parsed: unknown = typeof row.extraConfig === "string" ? JSON.parse(row.extraConfig) : row.extraConfig;
        if (isRecord(parsed)) extra = parsed;
      } catch {
        // An unreadable extraConfig only means no user id.
      }
      const oauth = text(row.oauthProvider) !== "";
      return [
        {
          siteUrl: site.url,
          siteName: site.name,
          userId: positiveInt(extra.platformUserId),
          accessToken: text(row.accessToken),
          alias: text(row.username) ? `${site.name} · ${text(row.username)}` : site.name || null,
          tags: [],
          pinned: row.isPinned === true,
          excluded: false,
          unsupported: oauth ? "该账户在原工具中以 OAuth 方式接入，无法导入" : null,
        },
      ];
    });
}

/** The accounts of a backup file, and which tool wrote it; a refusal in words for anything else. */
export function parseBackup(raw: unknown): { format: ImportFormat; candidates: ImportCandidate[] } {
  if (!isRecord(raw)) throw new Refusal(TRANSFER_MSG.unknown, "BAD_REQUEST");
  const metapi = fromMetapi(raw);
  const found = metapi ? { format: "metapi" as const, candidates: metapi } : null;
  const hub = found ? null : fromAllApiHub(raw);
  const result = found ?? (hub ? { format: "all-api-hub" as const, candidates: hub } : null);
  if (!result) throw new Refusal(TRANSFER_MSG.unknown, "BAD_REQUEST");
  if (result.candidates.length === 0) throw new Refusal(TRANSFER_MSG.empty, "BAD_REQUEST");
  if (result.candidates.length > MAX_WORKSPACE_ACCOUNTS) throw new Refusal(TRANSFER_MSG.tooMany, "BAD_REQUEST");
  return result;
}

/**
 * Imports the accounts into the workspace: matched to registered sites and the workspace's own by
 * address; a site neither knows is added as the workspace's own after its probe (where the
 * operator allows it). Each account is verified with its site (a few at a time, inside each
 * site's budget) and saved with its alias and settings. An account the workspace holds already
 * gets the new token and keeps its own settings.
 */
export async function importAccounts(
  db: Db,
  accounts: SavedAccounts,
  workspaceId: number,
  candidates: ImportCandidate[],
  probe: ProbeOptions,
  /** Told of each account newly saved, before the import goes on (a restore records what it made). */
  onSaved?: (accountId: number) => Promise<void>,
): Promise<ImportOutcome[]> {
  const known = new Map<string, Promise<number | { message: string }>>();
  const own = workspaceSites(db);
  for (const site of [...(await siteRegistry(db).list()), ...(await own.list(workspaceId))]) {
    const key = comparableSiteUrl(site.url);
    if (key !== null) known.set(key, Promise.resolve(site.id));
  }
  /** The site at an address of the file: known, or added once for all its accounts. */
  const siteOf = (url: string): Promise<number | { message: string }> => {
    const key = comparableSiteUrl(url) ?? "";
    let site = known.get(key);
    if (!site) {
      site =
        env().WORKSPACE_SITES === 0
          ? Promise.resolve({ message: TRANSFER_MSG.unregistered })
          : own.add(workspaceId, url, probe).then(
              (added) => added.id,
              (error: unknown) => {
                if (error instanceof Refusal) return { message: `无法添加这个站点：${error.message}` };
                throw error;
              },
            );
      known.set(key, site);
    }
    return site;
  };
  const before = new Map((await accounts.list(workspaceId)).map((a) => [`${a.siteId}:${a.siteUserId}`, a]));
  const limit = pLimit(4);
  // One verification per site account of the file: a file is not a way to try many tokens on one.
  const seen = new Set<string>();
  return Promise.all(
    candidates.map((c) =>
      limit(async (): Promise<ImportOutcome> => {
        const base = { siteUrl: c.siteUrl, siteName: c.siteName, userId: c.userId, alias: c.alias, accountId: null };
        const skip = (message: string) => ({ ...base, result: "skipped" as const, message });
        if (c.unsupported) return skip(c.unsupported);
        if (c.userId === null) return skip(TRANSFER_MSG.noUserId);
        if (c.accessToken === "") return skip(TRANSFER_MSG.noToken);
        const siteId = await siteOf(c.siteUrl);
        if (typeof siteId !== "number") return { ...base, result: "unregistered", message: siteId.message };
        const key = `${siteId}:${c.userId}`;
        if (seen.has(key)) return skip(TRANSFER_MSG.duplicate);
        seen.add(key);
        const held = before.get(key);
        // The token the workspace holds already, still the account's credential: nothing to ask the site.
        if (held?.state === "ok" && held.credential === credentialOf({ siteId, siteUserId: c.userId }, c.accessToken)) {
          return { ...base, result: "updated", message: TRANSFER_MSG.unchanged, accountId: held.id };
        }
        const existed = held !== undefined;
        try {
          const outcome = await accounts.add(workspaceId, {
            siteId,
            userId: c.userId,
            accessToken: c.accessToken,
            // An account kept already keeps what the person set here.
            ...(existed
              ? {}
              : { alias: c.alias?.slice(0, 40) ?? null, tags: c.tags.slice(0, 20).map((t) => t.slice(0, 20)) }),
          });
          if (!outcome.ok) return { ...base, result: "refused", message: outcome.message };
          if (!existed) await onSaved?.(outcome.account.id);
          if (!existed && (c.pinned || c.excluded)) {
            await accounts.update(workspaceId, outcome.account.id, { pinned: c.pinned, excluded: c.excluded });
          }
          return { ...base, result: existed ? "updated" : "saved", message: null, accountId: outcome.account.id };
        } catch (error) {
          if (error instanceof Refusal) return { ...base, result: "refused", message: error.message };
          throw error;
        }
      }),
    ),
  );
}

/** The account list as exported: no token, nothing secret. */
export function exportRows(list: SavedAccount[], siteNames: Map<number, { name: string; url: string }>) {
  return list.map((a) => ({
    id: a.id,
    site: siteNames.get(a.siteId)?.name ?? null,
    siteUrl: a.siteUrl,
    userId: a.siteUserId,
    username: a.username,
    displayName: a.displayName,
    alias: a.alias,
    tags: a.tags,
    pinned: a.pinned,
    excluded: a.excluded,
    order: a.order,
    state: a.state,
    createdAt: a.createdAt.toISOString(),
  }));
}

const CSV_HEADER = [
  "编号",
  "站点",
  "站点地址",
  "用户ID",
  "用户名",
  "显示名称",
  "别名",
  "标签",
  "置顶",
  "不计入合计",
  "状态",
  "保存时间",
];

export function exportCsv(rows: ReturnType<typeof exportRows>): string {
  const body = rows.map((r) =>
    [
      String(r.id),
      r.site ?? "",
      r.siteUrl,
      String(r.userId),
      r.username,
      r.displayName,
      r.alias ?? "",
      r.tags.join("、"),
      r.pinned ? "是" : "否",
      r.excluded ? "是" : "否",
      r.state === "ok" ? "正常" : r.state === "reauth" ? "需要重新授权" : "站点已移除",
      r.createdAt,
    ].map(neutralize),
  );
  return `\uFEFF${[CSV_HEADER, ...body].map(csvRecord).join("")}`;
}
