/**
 * All API Hub's backup file (format 4.0, docs/design.md 26), read and written as the extension
 * does: versions "1.0" to "4.0" accepted (absent means 1.0), the accounts under
 * `accounts.accounts` (or an older file's array or `data` wrapper), deletion records in
 * `accounts.deletedEntryRecords`. Everything this service does not use is kept as it came.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Family } from "../gateway/families";
import { comparableSiteUrl } from "../workspace/transfer";

export type HubData = Record<string, unknown>;
export type HubRecord = Record<string, unknown>;

const SUPPORTED_VERSIONS = new Set(["1.0", "2.0", "3.0", "4.0"]);

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "");
const ms = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** The file's data, or why it is refused (in the words shown to the person). */
export function readHubFile(raw: string): { ok: true; data: HubData } | { ok: false; message: string } {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return { ok: false, message: "文件不是有效的 JSON" };
  }
  if (!isRecord(data)) return { ok: false, message: "文件不是 All API Hub 的备份" };
  if (data.version !== undefined && !(typeof data.version === "string" && SUPPORTED_VERSIONS.has(data.version)))
    return { ok: false, message: `不支持的备份版本：${JSON.stringify(data.version).slice(0, 20)}` };
  const profiles = data.apiCredentialProfiles;
  if (isRecord(profiles) && typeof profiles.version === "number" && profiles.version > 5)
    return { ok: false, message: `不支持的 API 凭据版本：${profiles.version}` };
  return { ok: true, data };
}

/**
 * The file's accounts section, in the 4.0 shape: an older file's array or `data` wrapper becomes
 * `{accounts: [...]}` on the data itself (what is written back is always 4.0).
 */
export function accountsSection(data: HubData): Record<string, unknown> & { accounts: HubRecord[] } {
  let section = isRecord(data.accounts) ? data.accounts : null;
  if (!section) {
    const legacy = Array.isArray(data.accounts)
      ? data.accounts
      : isRecord(data.data) && Array.isArray(data.data.accounts)
        ? data.data.accounts
        : isRecord(data.data) && isRecord(data.data.accounts) && Array.isArray(data.data.accounts.accounts)
          ? data.data.accounts.accounts
          : [];
    section = { accounts: legacy };
    data.accounts = section;
  }
  if (!Array.isArray(section.accounts)) section.accounts = [];
  section.accounts = (section.accounts as unknown[]).filter(isRecord);
  return section as Record<string, unknown> & { accounts: HubRecord[] };
}

export type Tombstone = { deletedAt: number; entryUpdatedAt: number };

/** The deletion records of accounts (a record without a positive deletedAt is none). */
export function tombstonesOf(section: Record<string, unknown>): Map<string, Tombstone> {
  const out = new Map<string, Tombstone>();
  const records = isRecord(section.deletedEntryRecords) ? section.deletedEntryRecords : {};
  for (const [id, r] of Object.entries(records)) {
    if (!isRecord(r) || r.kind !== "account" || ms(r.deletedAt) <= 0) continue;
    out.set(id, { deletedAt: ms(r.deletedAt), entryUpdatedAt: ms(r.entryUpdatedAt) });
  }
  return out;
}

/** When the person last changed a record (what deletion records are weighed against). */
export const userTime = (r: HubRecord): number => ms(r.user_updated_at) || ms(r.updated_at);

/** What a record says of an account: its site, user id, token, how it signs in, its names. */
export function recordFields(r: HubRecord) {
  const info = isRecord(r.account_info) ? r.account_info : {};
  return {
    id: text(r.id),
    siteUrl: text(r.site_url),
    siteName: text(r.site_name),
    userId: text(info.id),
    token: text(info.access_token),
    username: text(info.username),
    authType: text(r.authType) || "access_token",
  };
}

/** The fingerprint of an account's address, user id and token: what both sides are compared by. */
export const printOf = (siteUrl: string, userId: string | number, token: string): string =>
  createHash("sha256")
    .update(`${comparableSiteUrl(siteUrl) ?? siteUrl.trim().toLowerCase()}\n${String(userId)}\n${token}`)
    .digest("base64url")
    .slice(0, 32);

export const recordPrint = (r: HubRecord): string => {
  const f = recordFields(r);
  return printOf(f.siteUrl, f.userId, f.token);
};

/** The extension's site type of a family (its `site_type` values are its own spellings). */
function siteTypeOf(family: Family | null): string {
  switch (family) {
    case "new-api":
    case "new-api-legacy":
      return "new-api";
    case "veloera":
      return "Veloera";
    case "one-api":
    case "one-hub":
    case "done-hub":
      return family;
    default:
      return "unknown";
  }
}

/** The extension's check-in method of a family; null where it has none. */
function checkinMethodOf(family: Family | null): string | null {
  if (family === "new-api" || family === "new-api-legacy") return "new-api:daily-checkin";
  if (family === "veloera") return "veloera:daily-checkin";
  return null;
}

/** A saved account as this service knows it, for the file. */
export type OurAccount = {
  siteUrl: string;
  siteName: string;
  family: Family | null;
  userId: string;
  token: string;
  username: string;
  name: string;
  excluded: boolean;
  autoCheckin: boolean;
  /** When its site day's check-in was done here (null when not today). */
  checkedInAt: Date | null;
  createdAt: Date;
};

export const newHubId = () => `account-${randomUUID()}`;

/** A new record of the file for an account saved here (the fields of the extension's V7 schema). */
export function newRecord(hubId: string, a: OurAccount, userAt: number, now: number): HubRecord {
  return {
    id: hubId,
    site_name: a.name,
    site_url: a.siteUrl,
    health: { status: "unknown" },
    site_type: siteTypeOf(a.family),
    exchange_rate: 7.2,
    account_info: {
      id: a.userId,
      access_token: a.token,
      username: a.username,
      quota: 0,
      today_prompt_tokens: 0,
      today_completion_tokens: 0,
      today_quota_consumption: 0,
      today_requests_count: 0,
      today_income: 0,
    },
    last_sync_time: 0,
    updated_at: now,
    user_updated_at: userAt,
    created_at: a.createdAt.getTime(),
    notes: "",
    tagIds: [],
    disabled: false,
    excludeFromTotalBalance: a.excluded,
    excludeFromTodayIncome: false,
    authType: "access_token",
    checkIn: {
      automaticExecutionEnabled: a.autoCheckin,
      methodKnowledge: { methods: {} },
      selection: { mode: "automatic" },
    },
    configVersion: 7,
  };
}

/** A record given this service's address, user id and token (the rest of it as the extension wrote it). */
export function overlayRecord(r: HubRecord, a: OurAccount, userAt: number, now: number): void {
  const info = isRecord(r.account_info) ? r.account_info : {};
  r.account_info = { ...info, id: a.userId, access_token: a.token, username: a.username || text(info.username) };
  r.site_url = a.siteUrl;
  r.authType = "access_token";
  delete r.cookieAuth;
  r.updated_at = now;
  r.user_updated_at = Math.max(userAt, userTime(r) + 1);
  if (r.configVersion === undefined) r.configVersion = 7;
}

/**
 * A check-in done here today, told in the record's check-in knowledge; false when it says so
 * already (or the family has no check-in the extension knows).
 */
export function overlayCheckin(r: HubRecord, a: OurAccount, now: number): boolean {
  const method = checkinMethodOf(a.family);
  if (!method || a.checkedInAt === null) return false;
  const checkIn = isRecord(r.checkIn) ? r.checkIn : {};
  const knowledge = isRecord(checkIn.methodKnowledge) ? checkIn.methodKnowledge : {};
  const methods = isRecord(knowledge.methods) ? knowledge.methods : {};
  const entry = isRecord(methods[method]) ? methods[method] : {};
  const status = isRecord(entry.status) ? entry.status : {};
  const evidence = isRecord(status.evidence) ? status.evidence : {};
  const observedAt = a.checkedInAt.getTime();
  if (status.today === "checked" && ms(evidence.observedAt) >= observedAt) return false;
  const detection = isRecord(entry.detection)
    ? entry.detection
    : { outcome: "matched", evidence: { source: "probe", observedAt } };
  r.checkIn = {
    ...checkIn,
    methodKnowledge: {
      ...knowledge,
      methods: {
        ...methods,
        [method]: {
          ...entry,
          detection,
          status: {
            outcome: "known",
            availability: "enabled",
            today: "checked",
            evidence: { source: "execution", observedAt },
          },
        },
      },
    },
  };
  r.updated_at = now;
  return true;
}

/** A file with nothing in it yet but what this service writes. */
export function emptyFile(now: number): HubData {
  return {
    version: "4.0",
    timestamp: now,
    channelConfigs: { schemaVersion: 1, configs: {} },
    accounts: { accounts: [], pinnedAccountIds: [], orderedAccountIds: [], deletedEntryRecords: {}, last_updated: now },
  };
}

/** Takes an account's record out of the file, with a deletion record the extension will apply. */
export function removeRecord(
  section: Record<string, unknown>,
  hubId: string,
  deletedAt: number,
  entryUpdatedAt: number,
) {
  section.accounts = (section.accounts as HubRecord[]).filter((r) => text(r.id) !== hubId);
  for (const key of ["pinnedAccountIds", "orderedAccountIds"]) {
    if (Array.isArray(section[key])) section[key] = (section[key] as unknown[]).filter((id) => id !== hubId);
  }
  const records = isRecord(section.deletedEntryRecords) ? section.deletedEntryRecords : {};
  records[hubId] = { kind: "account", deletedAt, entryUpdatedAt };
  section.deletedEntryRecords = records;
}
