import { inZone } from "./usage-range";

export function formatNumber(n: number): string {
  return n.toLocaleString("zh-CN");
}

const ROLES: Record<number, string> = { 0: "访客", 1: "普通用户", 10: "管理员", 100: "超级管理员" };

export function roleName(role: number): string {
  return ROLES[role] ?? `角色 ${role}`;
}

/** `2026-11-22 15:58 UTC`: rendered on the server, so it says which clock it is. */
export function formatTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export function formatRemaining(iso: string, now = Date.now()): string {
  const minutes = Math.max(0, Math.round((Date.parse(iso) - now) / 60_000));
  if (minutes < 60) return `${minutes} 分钟后`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} 小时后` : `${hours} 小时 ${rest} 分钟后`;
}

/** A moment in the page's zone (a workspace's, else the browser's): `2026-11-22 23:05:09`. */
export function formatLocal(iso: string | null): string {
  return iso ? inZone(new Date(iso)) : "—";
}

/** `12 秒前`, `3 分钟前`: the age of data fetched from a site. */
export function formatAge(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 5) return "刚刚";
  if (seconds < 60) return `${seconds} 秒前`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes} 分钟前` : `${Math.floor(minutes / 60)} 小时前`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return "—";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** An account of the ledger as charts and tables name it: its workspace alias, else `站点 · 用户`. */
export function ledgerName(a: {
  alias: string | null;
  site: { name: string } | null;
  username: string;
  userId: number;
}): string {
  return a.alias || `${a.site?.name ?? "站点已移除"} · ${a.username || `用户 ${a.userId}`}`;
}

/** The gateway families as the pages name them. */
export const FAMILY_NAMES: Record<string, string> = {
  "new-api": "new-api",
  "new-api-legacy": "new-api（旧版）",
  veloera: "Veloera",
  "one-api": "one-api",
  "one-hub": "one-hub",
  "done-hub": "done-hub",
  unknown: "未识别（按 new-api 读取）",
};
