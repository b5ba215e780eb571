/**
 * The 提醒 page's list (docs/design.md 21): a workspace's alerts, open ones first, then the resolved
 * ones newest first, each with its deliveries; never one still pending (held only once).
 */
import type { Db } from "../db/client";
import { savedAccounts, savedName, siteIndex } from "../workspace/saved-accounts";
import type { RuleKind } from "./engine";
import type { AlertView } from "./schemas";

export async function alertHistory(
  db: Db,
  workspaceId: number,
  page: { page: number; pageSize: number; state: "open" | "all" },
): Promise<{ total: number; open: number; items: AlertView[] }> {
  const where = { workspaceId, state: page.state === "open" ? "open" : { in: ["open", "resolved"] } };
  const [total, open, rows] = await Promise.all([
    db.alert.count({ where }),
    db.alert.count({ where: { workspaceId, state: "open" } }),
    db.alert.findMany({
      where,
      orderBy: [{ state: "asc" }, { openedAt: "desc" }, { id: "desc" }],
      skip: (page.page - 1) * page.pageSize,
      take: page.pageSize,
      select: {
        id: true,
        ruleId: true,
        accountId: true,
        kind: true,
        threshold: true,
        state: true,
        message: true,
        value: true,
        openedAt: true,
        since: true,
        resolvedAt: true,
      },
    }),
  ]);
  // A page's alerts, each sent to at most 20 channels at its opening and its end.
  const deliveries = await db.alertDelivery.findMany({
    where: { alertId: { in: rows.map((r) => r.id) } },
    orderBy: { id: "asc" },
    take: rows.length * 40,
    select: {
      alertId: true,
      channelId: true,
      event: true,
      status: true,
      attempts: true,
      lastError: true,
      sentAt: true,
      nextAt: true,
    },
  });
  const accounts = await savedAccounts(db, { timeoutMs: 0, perMinute: 0 }).list(workspaceId, await siteIndex(db));
  const names = new Map(accounts.map((a) => [a.id, savedName(a)]));
  return {
    total,
    open,
    items: rows.map((r) => ({
      id: r.id,
      rule: { id: r.ruleId, kind: r.kind as RuleKind, threshold: r.threshold },
      account: { id: r.accountId, name: names.get(r.accountId) ?? "已移除的账户" },
      state: r.state as "open" | "resolved",
      message: r.message,
      value: r.value,
      openedAt: (r.openedAt ?? r.since).toISOString(),
      resolvedAt: r.resolvedAt?.toISOString() ?? null,
      deliveries: deliveries
        .filter((d) => d.alertId === r.id)
        .map((d) => ({
          channelId: d.channelId,
          event: d.event as AlertView["deliveries"][number]["event"],
          status: d.status as AlertView["deliveries"][number]["status"],
          attempts: d.attempts,
          lastError: d.lastError,
          at: (d.sentAt ?? d.nextAt).toISOString(),
        })),
    })),
  };
}

/** The open alerts of a workspace's accounts, by account, newest first (the rows of 全部账户 show them). */
export async function openAlertsOf(
  db: Db,
  workspaceId: number,
): Promise<Map<number, Array<{ kind: RuleKind; message: string }>>> {
  const out = new Map<number, Array<{ kind: RuleKind; message: string }>>();
  const rows = await db.alert.findMany({
    // The live ones only (a unique key, null once resolved): the history is never scanned.
    where: { workspaceId, state: "open", liveKey: { not: null } },
    orderBy: { openedAt: "desc" },
    select: { accountId: true, kind: true, message: true },
  });
  for (const r of rows) {
    out.set(r.accountId, [...(out.get(r.accountId) ?? []), { kind: r.kind as RuleKind, message: r.message }]);
  }
  return out;
}

/** Ends the live alerts of a saved account that left its workspace, without a message. */
export async function endAccountAlerts(
  db: Db,
  workspaceId: number,
  accountId: number,
  now = new Date(),
): Promise<void> {
  await db.alert.updateMany({
    where: { workspaceId, accountId, liveKey: { not: null } },
    data: { state: "resolved", resolvedAt: now, liveKey: null, clearing: false },
  });
}

/** Resolved alerts and sent or given-up messages are kept this long, then removed. */
const ALERT_KEEP_DAYS = 180;

/**
 * Removes what is past keeping, in bounded batches: resolved alerts with their messages, digest
 * messages, and (a channel deleted long ago) messages of alerts that are gone. Returns how many rows.
 */
export async function pruneAlertHistory(db: Db, now = new Date(), batch = 500): Promise<number> {
  const before = new Date(now.getTime() - ALERT_KEEP_DAYS * 86_400_000);
  const old = await db.alert.findMany({
    where: { state: "resolved", resolvedAt: { lt: before } },
    select: { id: true },
    take: batch,
  });
  const ids = old.map((a) => a.id);
  let removed = 0;
  if (ids.length > 0) {
    const [messages, alerts] = await db.$transaction([
      db.alertDelivery.deleteMany({ where: { alertId: { in: ids } } }),
      db.alert.deleteMany({ where: { id: { in: ids } } }),
    ]);
    removed += messages.count + alerts.count;
  }
  const digests = await db.alertDelivery.deleteMany({
    where: { alertId: null, status: { in: ["sent", "failed"] }, createdAt: { lt: before } },
  });
  return removed + digests.count;
}
