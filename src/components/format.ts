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

/** A moment in the browser's own time zone: `2026-11-22 23:05:09`. */
export function formatLocal(iso: string | null): string {
  if (!iso) return "—";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
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
