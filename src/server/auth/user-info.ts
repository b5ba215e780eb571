/**
 * What is kept of the user object a site answers at sign-in (it is stored with the session and
 * answered by `me`): the contract passes it through, but a site decides its size. Secret fields
 * older gateways leak are dropped; the rest is bounded in depth, length and size, and an object
 * still too large keeps only the fields the dashboard and the contract use.
 */
import { cutText } from "../core/text";
import { CREDENTIAL_FIELDS } from "../gateway/credentials";
import type { UserInfo } from "./schemas";

const USER_INFO_LIMITS = {
  /** Levels of nesting kept below the object itself (`permissions.sidebar_modules.admin`). */
  depth: 3,
  text: 1000,
  items: 50,
  keys: 100,
  /** The whole object as JSON, in characters. */
  json: 16 * 1024,
} as const;

/** The fields of gateway.md's user object that this service or the dashboard read. */
const KNOWN_FIELDS = [
  "id",
  "username",
  "display_name",
  "role",
  "status",
  "email",
  "group",
  "quota",
  "used_quota",
  "request_count",
  "aff_code",
  "aff_count",
  "aff_quota",
  "aff_history_quota",
  "inviter_id",
];

function bounded(value: unknown, depth: number): unknown {
  if (typeof value === "string") return cutText(value, USER_INFO_LIMITS.text);
  if (value === null || typeof value !== "object") return value;
  if (depth >= USER_INFO_LIMITS.depth) return undefined;
  if (Array.isArray(value)) {
    return value
      .slice(0, USER_INFO_LIMITS.items)
      .map((v) => bounded(v, depth + 1))
      .filter((v) => v !== undefined);
  }
  const out: Record<string, unknown> = {};
  let keys = 0;
  for (const [key, v] of Object.entries(value)) {
    if (keys >= USER_INFO_LIMITS.keys) break;
    if (depth === 0 && CREDENTIAL_FIELDS.has(key)) continue;
    const kept = bounded(v, depth + 1);
    if (kept === undefined) continue;
    out[cutText(key, 100)] = kept;
    keys++;
  }
  return out;
}

/** The user object as it is stored and answered. */
export function keptUserInfo(info: UserInfo): UserInfo {
  const kept = bounded(info, 0) as UserInfo;
  if (JSON.stringify(kept).length <= USER_INFO_LIMITS.json) return kept;
  const known: UserInfo = { id: info.id };
  for (const key of KNOWN_FIELDS) {
    const v = info[key];
    if (typeof v === "number" || typeof v === "boolean") known[key] = v;
    else if (typeof v === "string") known[key] = cutText(v, 256);
  }
  return known;
}
