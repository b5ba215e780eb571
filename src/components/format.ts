/** 500 000 quota is one US dollar on the one-api / new-api family. */
const QUOTA_PER_USD = 500_000;

export function formatUsd(quota: number): string {
  return `$${(quota / QUOTA_PER_USD).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

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
