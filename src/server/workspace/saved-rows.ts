/**
 * A saved account as it is stored and shown (docs/design.md 17): its row, its state (a credential that
 * ended, docs/design.md 24, reads as `reauth`), what the person may set on it, and the sites it refers to.
 */
import { Refusal } from "../core/errors";
import type { Db } from "../db/client";
import type { Family } from "../gateway/families";
import type { SiteRef } from "../db/hot-path";
import { endingKey, heldUntilSecond } from "../session/possession";
import { SESSION_LIFETIME_MS } from "../session/store";
import { siteRegistry } from "../sites/registry";

export const MAX_WORKSPACE_ACCOUNTS = 200;
const MAX_TAGS = 20;
const MAX_TAG_CHARS = 20;
const MAX_ALIAS_CHARS = 40;

export const SAVED_MSG = {
  notFound: "工作区中没有这个账户",
  tooMany: `一个工作区最多保存 ${MAX_WORKSPACE_ACCOUNTS} 个账户`,
  reauth: "站点拒绝了保存的访问令牌，请重新授权",
  unsealable: "保存的访问令牌无法解密（密钥已更换），请重新授权",
  moved: "站点地址已变更，令牌不会发往新地址，请重新授权",
  ended: "站点已不再接受保存的访问令牌（令牌已重置或被拒绝），请重新授权",
  removed: "站点已移除",
  aliasTooLong: `别名不能超过 ${MAX_ALIAS_CHARS} 个字符`,
  badTags: `标签最多 ${MAX_TAGS} 个，每个 1 到 ${MAX_TAG_CHARS} 个字符`,
  empty: "工作区中还没有账户，请先添加账户",
  alreadySaved: (name: string) =>
    `这个账户已保存在工作区中（${name}），没有做任何修改；要换访问令牌，请在「工作区」页对它点「重新授权」`,
} as const;

type SavedState = "ok" | "reauth" | "site_removed";

/** A text field of the user object the site gave ("" when it is not text). */
const textOf = (info: Record<string, unknown>, key: string) => (typeof info[key] === "string" ? info[key] : "");

/** A saved account as the workspace lists it; never its token. */
export type SavedAccount = {
  id: number;
  workspaceId: number;
  siteId: number;
  siteUserId: number;
  siteUrl: string;
  userId: number | string;
  username: string;
  displayName: string;
  alias: string | null;
  tags: string[];
  pinned: boolean;
  excluded: boolean;
  order: number;
  state: SavedState;
  stateMessage: string | null;
  stateAt: Date;
  createdAt: Date;
  sessionId: string | null;
  /** 自动签到 is on. */
  autoCheckin: boolean;
  /** The last automatic check-in: the site day, its outcome and message, and when (null before the first). */
  checkin: { day: string; state: string; message: string; at: Date } | null;
  /** The saved token's fingerprint (session/possession.ts); null when saved before they were kept. */
  credential: string | null;
  /**
   * Set once the saved token is no longer the account's credential: the first second after the
   * history this workspace may still read (docs/design.md 24). null while it holds the account.
   */
  heldUntil: number | null;
};

/** The bound of the history a saved account's workspace reads (docs/design.md 24): none while it holds the account. */
export const heldOf = (a: Pick<SavedAccount, "heldUntil">): { until?: number } =>
  a.heldUntil === null ? {} : { until: a.heldUntil };

/** How a saved account is named in messages and lists: its alias, else the site's names, else its id. */
export const savedName = (a: Pick<SavedAccount, "alias" | "displayName" | "username" | "siteUserId">): string =>
  a.alias || a.displayName || a.username || `用户 ${a.siteUserId}`;

export const accountSelect = {
  id: true,
  workspaceId: true,
  siteId: true,
  siteUserId: true,
  siteUrl: true,
  userId: true,
  username: true,
  displayName: true,
  alias: true,
  tags: true,
  pinned: true,
  excluded: true,
  position: true,
  state: true,
  stateMessage: true,
  stateAt: true,
  createdAt: true,
  sessionId: true,
  autoCheckin: true,
  checkinDay: true,
  checkinState: true,
  checkinMessage: true,
  checkinAt: true,
  credential: true,
} as const;

export type Row = {
  id: number;
  workspaceId: number;
  siteId: number;
  siteUserId: bigint;
  siteUrl: string;
  userId: string;
  username: string;
  displayName: string;
  alias: string | null;
  tags: string;
  pinned: boolean;
  excluded: boolean;
  position: number;
  state: string;
  stateMessage: string | null;
  stateAt: Date;
  createdAt: Date;
  sessionId: string | null;
  autoCheckin: boolean;
  checkinDay: string | null;
  checkinState: string | null;
  checkinMessage: string | null;
  checkinAt: Date | null;
  credential: string | null;
};

/** When the credentials of saved accounts ended (possession.ts endings), by endingKey. */
export type Endings = Map<string, Date>;

export const endingOf = (row: Pick<Row, "siteId" | "siteUserId" | "credential">, endings: Endings) =>
  row.credential === null
    ? undefined
    : endings.get(endingKey({ siteId: row.siteId, siteUserId: Number(row.siteUserId) }, row.credential));

/** The registered sites by id (absent once removed): read once per request and handed around. */
/** The registered sites by id, each with its family as last probed ("unknown" before). */
export type SiteIndex = Map<number, SiteRef & { family: Family }>;

export async function siteIndex(db: Db): Promise<SiteIndex> {
  return new Map(
    (await siteRegistry(db).listProfiled()).map((s) => [
      s.id,
      { id: s.id, name: s.name, url: s.url, family: s.family },
    ]),
  );
}

export function fromRow(row: Row, sites: SiteIndex, endings: Endings): SavedAccount {
  const url = sites.get(row.siteId)?.url;
  // The saved token is no longer the account's credential: this workspace no longer holds it.
  const ended = endingOf(row, endings);
  // The registry decides `site_removed`; an address change waits for renewal to say `reauth`.
  const state: SavedState = url === undefined ? "site_removed" : row.state === "reauth" || ended ? "reauth" : "ok";
  const { position, siteUserId, userId, tags, checkinDay, checkinState, checkinMessage, checkinAt, ...rest } = row;
  return {
    ...rest,
    checkin:
      checkinDay !== null && checkinState !== null && checkinAt !== null
        ? { day: checkinDay, state: checkinState, message: checkinMessage ?? "", at: checkinAt }
        : null,
    siteUserId: Number(siteUserId),
    userId: JSON.parse(userId) as number | string,
    tags: JSON.parse(tags) as string[],
    order: position,
    state,
    stateMessage:
      state === "site_removed"
        ? SAVED_MSG.removed
        : ended && row.state !== "reauth"
          ? SAVED_MSG.ended
          : row.stateMessage,
    heldUntil: ended ? heldUntilSecond(ended) : null,
  };
}

/** What the sealed token is bound to: a copy in another row, workspace or account does not open. */
export const vaultContext = (workspaceId: number, siteId: number, siteUserId: number) =>
  `workspace-account:${workspaceId}:${siteId}:${siteUserId}`;

export function checkAlias(alias: string | null | undefined): string | null {
  const trimmed = alias?.trim() ?? "";
  if ([...trimmed].length > MAX_ALIAS_CHARS) throw new Refusal(SAVED_MSG.aliasTooLong, "BAD_REQUEST");
  return trimmed === "" ? null : trimmed;
}

export function checkTags(tags: string[]): string[] {
  const cleaned = [...new Set(tags.map((t) => t.trim()).filter((t) => t !== ""))];
  if (cleaned.length > MAX_TAGS || cleaned.some((t) => [...t].length > MAX_TAG_CHARS)) {
    throw new Refusal(SAVED_MSG.badTags, "BAD_REQUEST");
  }
  return cleaned;
}

/** The background renewal starts this long before a session ends, so a read rarely waits for one. */
const RUNNER_RENEW_BEFORE_MS = 3 * 60 * 60_000;

/**
 * What a site's acceptance of the token sets on the account: its new session, its names, `ok`,
 * when the runner renews that session (RUNNER_RENEW_BEFORE_MS before it ends), and its price read
 * due.
 */
export function verifiedFields(
  verified: { sessionId: string; userInfo: Record<string, unknown>; credential: string },
  now: Date,
) {
  return {
    sessionId: verified.sessionId,
    credential: verified.credential,
    username: textOf(verified.userInfo, "username"),
    displayName: textOf(verified.userInfo, "display_name"),
    state: "ok",
    stateMessage: null,
    stateAt: now,
    renewAt: new Date(now.getTime() + SESSION_LIFETIME_MS - RUNNER_RENEW_BEFORE_MS),
    // Its prices are read at the next look (a read within the hour is not repeated).
    pricesNext: now,
  };
}
