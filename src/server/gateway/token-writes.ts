/**
 * Token (API key) writes per family (gateway-actions.md §2.2, §3–§6): what each family accepts,
 * the body it wants, and the traps. An update replaces every field, so it is always built from
 * the token as the site has it now; creation answers without the key on new-api, Veloera and
 * one-hub; one-api deletes for good; current new-api masks keys and reveals one per call from
 * its critical budget.
 */
import { isIP } from "node:net";
import type { Family } from "./families";
import type { WriteRequest } from "./writes";

/** A token as a person sets it: the same fields for every family, mapped to each one's own. */
export type TokenDraft = {
  name: string;
  unlimited: boolean;
  /** In the site's quota units; ignored when unlimited. */
  remainQuota: number;
  /** Unix seconds; null: never expires. */
  expiresAt: number | null;
  /** Models the key may call; empty: any. */
  models: string[];
  /** Addresses (IP or CIDR) the key may be used from; empty: any. */
  allowIps: string[];
  /** The group the key is billed in; "" the account's own. */
  group: string;
};

export type TokenRules = {
  /** Longest name in bytes of UTF-8 (a Chinese character is 3). */
  nameBytes: number;
  /** Highest quota of a limited key; null when the site does not check. */
  maxQuota: number | null;
  /** Whether a key can be given a group. */
  groups: boolean;
  /** new-api deletes a batch in one call; the others one by one. */
  batchDelete: boolean;
  /** one-api's delete cannot be undone (the others keep a soft-deleted row). */
  hardDelete: boolean;
  /** Current new-api masks keys in lists and reveals one with `POST /api/token/:id/key` (its critical budget). */
  revealRoute: boolean;
  /** one-api's allow-list takes networks only (a single address is sent as /32 or /128). */
  cidrOnly: boolean;
};

const isRow = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const hubLike = (f: Family) => f === "one-hub" || f === "done-hub";

export function tokenRules(family: Family, quotaPerUnit: number): TokenRules {
  const current = family === "new-api";
  return {
    nameBytes: current ? 50 : 30,
    maxQuota: current ? 1e9 * quotaPerUnit : null,
    groups: family !== "one-api",
    batchDelete: current,
    hardDelete: family === "one-api",
    revealRoute: current || family === "unknown",
    cidrOnly: family === "one-api",
  };
}

/** Longest model list a site keeps (Veloera's `varchar(1024)`). */
const MODELS_MAX = 1024;
const ALLOW_MAX = 50;

/** An IPv4/IPv6 address or a network in CIDR form. */
function isAddressOrNetwork(text: string): boolean {
  const [address = "", prefix, extra] = text.split("/");
  if (extra !== undefined) return false;
  const kind = isIP(address);
  if (kind === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (kind === 4 ? 32 : 128);
}

/** Why the site would refuse the draft (or should never be sent it), in words; null when it is fine. */
export function draftProblem(draft: TokenDraft, rules: TokenRules, now = Date.now()): string | null {
  const name = draft.name.trim();
  if (name === "") return "请填写令牌名称";
  const bytes = Buffer.byteLength(name, "utf8");
  if (bytes > rules.nameBytes) {
    return `令牌名称太长：这个站点最多 ${rules.nameBytes} 字节（约 ${Math.floor(rules.nameBytes / 3)} 个汉字），现在是 ${bytes} 字节`;
  }
  if (!draft.unlimited) {
    if (!Number.isSafeInteger(draft.remainQuota) || draft.remainQuota < 0) return "额度应为不小于 0 的整数";
    if (rules.maxQuota !== null && draft.remainQuota > rules.maxQuota) return "额度超出了这个站点允许的最大值";
  }
  if (draft.expiresAt !== null && draft.expiresAt * 1000 <= now) return "过期时间应晚于现在";
  for (const model of draft.models) {
    if (model === "" || /[,\s]/.test(model)) return `模型名「${model}」不对：不能为空，也不能含逗号或空格`;
  }
  if (draft.models.join(",").length > MODELS_MAX) return `模型限制太长：合计最多 ${MODELS_MAX} 个字符`;
  if (draft.allowIps.length > ALLOW_MAX) return `IP 白名单最多 ${ALLOW_MAX} 项`;
  for (const entry of draft.allowIps) {
    if (!isAddressOrNetwork(entry)) return `「${entry}」不是 IP 地址或网段（如 203.0.113.7 或 10.0.0.0/8）`;
  }
  if (draft.group !== "" && !rules.groups) return "这类站点的令牌不能指定分组";
  if (draft.group.length > 64 || /\s/.test(draft.group)) return "分组名不对：不含空格，至多 64 个字符";
  return null;
}

const networkOf = (entry: string) => (entry.includes("/") ? entry : `${entry}/${isIP(entry) === 6 ? 128 : 32}`);

/** The family's own fields for a draft (the nine of new-api, one-api's six, one-hub's `setting`). */
function familyFields(
  family: Family,
  draft: TokenDraft,
  stored: Record<string, unknown> = {},
): Record<string, unknown> {
  const common = {
    name: draft.name.trim(),
    remain_quota: draft.unlimited && isNumber(stored.remain_quota) ? stored.remain_quota : draft.remainQuota,
    unlimited_quota: draft.unlimited,
    // Sent always: a missing expiry is 0, which expires the key at its next use.
    expired_time: draft.expiresAt ?? -1,
  };
  if (family === "one-api") {
    return { ...common, models: draft.models.join(","), subnet: draft.allowIps.map(networkOf).join(",") };
  }
  if (hubLike(family)) {
    const setting = isRow(stored.setting) ? stored.setting : {};
    const limits = isRow(setting.limits) ? setting.limits : {};
    return {
      ...common,
      group: draft.group,
      backup_group: typeof stored.backup_group === "string" ? stored.backup_group : "",
      setting: {
        heartbeat: isRow(setting.heartbeat) ? setting.heartbeat : { enabled: false, timeout_seconds: 0 },
        ...setting,
        limits: {
          ...limits,
          limit_model_setting: { enabled: draft.models.length > 0, models: draft.models },
          limits_ip_setting: { enabled: draft.allowIps.length > 0, whitelist: draft.allowIps },
        },
      },
    };
  }
  return {
    ...common,
    model_limits_enabled: draft.models.length > 0,
    model_limits: draft.models.join(","),
    allow_ips: draft.allowIps.join("\n"),
    group: draft.group,
    ...(family === "new-api" ? { cross_group_retry: stored.cross_group_retry === true } : {}),
  };
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

export const createTokenRequest = (family: Family, draft: TokenDraft): WriteRequest => ({
  method: "POST",
  path: "/api/token/",
  body: familyFields(family, draft),
});

/** The fields of a stored token that never go back to the site: the key, and what the site keeps itself. */
const NOT_SENT = new Set(["key", "DeletedAt", "deleted_at", "user_id", "used_quota", "accessed_time", "created_time"]);

/**
 * An edit: the token as the site has it now with the draft's fields over it, every field present
 * (a field left out is reset by every family), and never its key.
 */
export function updateTokenRequest(family: Family, stored: Record<string, unknown>, draft: TokenDraft): WriteRequest {
  const kept = Object.fromEntries(Object.entries(stored).filter(([k]) => !NOT_SENT.has(k)));
  return {
    method: "PUT",
    path: "/api/token/",
    body: { ...kept, ...familyFields(family, draft, stored), id: stored.id },
  };
}

/** The draft a stored token is now (the form an edit starts from and the fields it keeps). */
export function draftOf(row: Record<string, unknown>): TokenDraft {
  const setting = isRow(row.setting) ? row.setting : {};
  const limits = isRow(setting.limits) ? setting.limits : {};
  const modelSetting = isRow(limits.limit_model_setting) ? limits.limit_model_setting : null;
  const ipSetting = isRow(limits.limits_ip_setting) ? limits.limits_ip_setting : null;
  const list = (v: unknown, sep: RegExp) =>
    typeof v === "string"
      ? v
          .split(sep)
          .map((s) => s.trim())
          .filter(Boolean)
      : Array.isArray(v)
        ? v.filter((s): s is string => typeof s === "string" && s !== "")
        : [];
  let models: string[];
  if (modelSetting) models = modelSetting.enabled === true ? list(modelSetting.models, /,/) : [];
  else if ("model_limits_enabled" in row) models = row.model_limits_enabled === true ? list(row.model_limits, /,/) : [];
  else models = list(row.models, /,/);
  let allowIps: string[];
  if (ipSetting) allowIps = ipSetting.enabled === true ? list(ipSetting.whitelist, /[\n,]/) : [];
  else if ("subnet" in row) allowIps = list(row.subnet, /[\n,]/);
  else allowIps = list(row.allow_ips, /[\n,]/);
  const expires = isNumber(row.expired_time) ? row.expired_time : -1;
  return {
    name: typeof row.name === "string" ? row.name : "",
    unlimited: row.unlimited_quota === true,
    remainQuota: isNumber(row.remain_quota) ? row.remain_quota : 0,
    expiresAt: expires > 0 ? expires : null,
    models,
    allowIps,
    group: typeof row.group === "string" ? row.group : "",
  };
}

export const tokenStatusRequest = (id: number, enabled: boolean): WriteRequest => ({
  method: "PUT",
  path: "/api/token/",
  query: { status_only: "true" },
  body: { id, status: enabled ? 1 : 2 },
});

export const deleteTokenRequest = (id: number): WriteRequest => ({ method: "DELETE", path: `/api/token/${id}` });

export const batchDeleteRequest = (ids: number[]): WriteRequest => ({
  method: "POST",
  path: "/api/token/batch",
  body: { ids },
});

export const tokenRequest = (id: number) => ({ path: `/api/token/${id}`, query: {} });

export const revealRequest = (id: number): WriteRequest => ({ method: "POST", path: `/api/token/${id}/key` });

/** The key of a reveal's answer (`data.key`) or of a token row; null when it is missing or masked. */
export function fullKey(data: unknown): string | null {
  const key = isRow(data) ? data.key : null;
  if (typeof key !== "string" || key.trim() === "" || key.includes("*")) return null;
  const k = key.trim();
  // Clients send keys with `sk-`; the sites store them without.
  return k.startsWith("sk-") ? k : `sk-${k}`;
}

/**
 * The characters an API key is made of (every family's keys: letters, digits and `-_.~+/=:`). A
 * "key" with anything else (a line break and another variable after it, a quote) is no key: it is
 * refused before it reaches any export (docs/design.md 29).
 */
const KEY_SHAPE = /^[A-Za-z0-9._~+/=:-]{1,512}$/;
export const isKeyShaped = (key: string) => KEY_SHAPE.test(key);

/** The id a create answered with (one-api's whole token, done-hub's `{id, key}`); null when it sent none. */
export function createdId(data: unknown): number | null {
  return isRow(data) && isNumber(data.id) && data.id > 0 ? data.id : null;
}

/** A token write's refusal in words: the sites answer a token that is not theirs with GORM's text. */
export function tokenRefusal(message: string): string {
  const m = message.trim();
  if (/record not found|id 或 userId 为空/i.test(m)) return "站点上没有这个令牌（可能已被删除）";
  return m || "站点拒绝了这次操作";
}
