/**
 * Evaluating a workspace's rules against its saved accounts (docs/design.md 21): each account's figures
 * from the ledger and the saved account, each rule's condition, the alert's next step (engine.ts),
 * and for every message an outbox row per channel written in the same transaction as the alert's
 * new state, so an event is delivered once whoever evaluates.
 */
import type { Db } from "../db/client";
import { addDays, dayIn } from "../core/time";
import { watchFigures, type WatchFigures } from "../ledger/watch-figures";
import { reconcileMany, type ReconciledDay } from "../ledger/reconcile";
import { modelRises, type ModelRise } from "../prices/changes";
import { overchargesSince } from "../ledger/check-view";
import { daysLeftWith, storedPlans, type StoredPlans } from "../ledger/plans";
import { planActive, planTitle, planWindow } from "../gateway/plans";
import { siteRegistry } from "../sites/registry";
import { syncStates } from "../ledger/sync-status";
import { heldOf, savedAccounts, savedName, siteIndex, type SavedAccount } from "../workspace/saved-accounts";
import { check, median, nextStep, type AlertEvent, type Check, type Facts, type LiveAlert } from "./engine";
import { alertRules, type StoredRule } from "./rules";

const HOUR_MS = 3_600_000;

/** Where the account's syncs stand (ledger/sync-status.ts). */
type SyncState = { syncedAt: Date | null; lastError: string | null };

/** An account's facts for the rules, from its figures, its 对账 and the saved account's state. */
function factsOf(
  a: SavedAccount,
  sync: SyncState | undefined,
  figures: WatchFigures | undefined,
  days: ReconciledDay[],
  quotaPerUnit: number,
  rises: ModelRise[],
  overcharge: { over: number; spent: number } | undefined,
  plans: StoredPlans | undefined,
  tz: string,
  now: Date,
): Facts {
  const nowSeconds = now.getTime() / 1000;
  const when = new Intl.DateTimeFormat("zh-CN", {
    ...{ timeZone: tz, month: "2-digit", day: "2-digit" },
    ...{ hour: "2-digit", minute: "2-digit", hourCycle: "h23" },
  } as const);
  const balanceUsd = figures?.balanceUsd ?? null;
  // Down: its syncs fail for a reason that is not the token (that is token_refused).
  const failing = sync?.lastError && !/重新授权|拒绝了访问令牌/.test(sync.lastError);
  const lastGood = sync?.syncedAt ?? a.createdAt;
  const checkin =
    a.autoCheckin && a.checkin && now.getTime() - a.checkin.at.getTime() < 36 * HOUR_MS ? a.checkin : null;
  // 对账 of yesterday and today: the largest move the log does not explain.
  const worst = days
    .filter((d) => d.flagged && d.difference !== null)
    .sort((x, y) => Math.abs(y.difference ?? 0) - Math.abs(x.difference ?? 0))[0];
  return {
    balanceUsd,
    // Plans pay before, after or instead of the wallet (docs/design.md 27).
    // 预计可用天数 by its one definition (ledger/days-left.ts).
    daysLeft: figures ? daysLeftWith(plans, figures.balanceQuota, figures.paceQuota, Math.floor(nowSeconds)) : null,
    spendTodayUsd: figures?.todayUsd ?? null,
    refused: a.state === "reauth",
    downMinutes: failing ? (now.getTime() - lastGood.getTime()) / 60_000 : null,
    checkinProblem:
      checkin?.state === "failed"
        ? `自动签到失败：${checkin.message}`
        : checkin?.state === "manual"
          ? "需手动签到：站点要求人机验证"
          : null,
    unmatchedUsd: worst ? (worst.difference ?? 0) / quotaPerUnit : null,
    sameHourMedianUsd: figures ? median(figures.sameHourUsd) : null,
    priceRises: rises,
    plans: (plans?.plans ?? [])
      .filter((p) => planActive(p, nowSeconds))
      .map((p) => {
        const window = planWindow(p, nowSeconds);
        return {
          title: planTitle(p),
          endsInDays: (p.end - nowSeconds) / 86_400,
          ends: when.format(new Date(p.end * 1000)),
          usedPct: window.usedPct,
          remainingUsd: window.left === null ? null : window.left / quotaPerUnit,
        };
      }),
    overcharged: overcharge
      ? {
          usd: overcharge.over / quotaPerUnit,
          pct: overcharge.spent > 0 ? (overcharge.over / overcharge.spent) * 100 : null,
        }
      : null,
  };
}

/**
 * Every account's facts in a few reads for the whole workspace (not a few per account): the
 * ledger's figures, and 对账 of yesterday and today only when a rule asks for it.
 */
async function factsOfAll(
  db: Db,
  accounts: SavedAccount[],
  kinds: Set<string>,
  tz: string,
  now: Date,
): Promise<Map<number, Facts>> {
  const profiles = new Map((await siteRegistry(db).listProfiled()).map((s) => [s.id, s]));
  const watched = accounts.filter((a) => profiles.has(a.siteId));
  const owners = watched.map((a) => ({
    siteId: a.siteId,
    siteUserId: a.siteUserId,
    ...heldOf(a),
    quotaPerUnit: profiles.get(a.siteId)!.money.quotaPerUnit,
  }));
  const today = dayIn(tz, now.getTime());
  const [syncs, figures, reconciled, rises, overcharges, plans] = await Promise.all([
    // Where every account's syncs stand, in one read.
    syncStates(db, accounts, now),
    watchFigures(db, owners, tz, now),
    kinds.has("unmatched_move")
      ? reconcileMany(db, owners, { from: addDays(today, -1), to: today, tz })
      : Promise.resolve(new Map<string, ReconciledDay[]>()),
    kinds.has("price_changed") ? modelRises(db, accounts, now) : Promise.resolve(new Map<string, ModelRise[]>()),
    kinds.has("overcharged_above")
      ? overchargesSince(db, owners, Math.floor(now.getTime() / 1000) - 86_400)
      : Promise.resolve(new Map<string, { over: number; spent: number }>()),
    // Plans only where a rule reads them: the days left, and the plan rules.
    ["days_left_below", "plan_ending_within", "plan_used_above"].some((k) => kinds.has(k))
      ? storedPlans(db, owners)
      : Promise.resolve(new Map<string, StoredPlans>()),
  ]);
  const facts = new Map<number, Facts>();
  for (const a of accounts) {
    const key = `${a.siteId}:${a.siteUserId}`;
    const site = profiles.get(a.siteId);
    facts.set(
      a.id,
      factsOf(
        a,
        syncs.get(key),
        site ? figures.get(key) : undefined,
        reconciled.get(key) ?? [],
        site?.money.quotaPerUnit ?? 1,
        rises.get(key) ?? [],
        overcharges.get(key),
        plans.get(key),
        tz,
        now,
      ),
    );
  }
  return facts;
}

type AlertRow = {
  id: number;
  ruleId: number;
  accountId: number;
  state: string;
  notified: number | null;
  notifiedAt: Date | null;
  clearing: boolean;
  openedAt: Date | null;
};

/** The message an event sends: what, about which account, the figures, when. */
function payloadOf(
  event: AlertEvent,
  alert: { id: number; openedAt: Date | null; resolvedAt: Date | null },
  rule: StoredRule,
  account: SavedAccount,
  site: string | null,
  result: Check,
  now: Date,
  timeZone: string,
): string {
  return JSON.stringify({
    event,
    at: now.toISOString(),
    timeZone,
    alert: {
      id: alert.id,
      state: event === "resolved" ? "resolved" : "open",
      openedAt: alert.openedAt?.toISOString() ?? null,
      resolvedAt: alert.resolvedAt?.toISOString() ?? null,
      message: result.text,
      value: result.value,
    },
    rule: { id: rule.id, kind: rule.kind, threshold: rule.threshold },
    account: { id: account.id, name: savedName(account), site, userId: account.siteUserId },
  });
}

/** Evaluates the workspace's rules now; returns the events it sent (to the outbox). */
export async function evaluateWorkspace(db: Db, workspaceId: number, now = new Date()): Promise<number> {
  const rules = alertRules(db);
  const { timeZone } = await rules.settings(workspaceId, now);
  const active = (await rules.list(workspaceId)).filter((r) => !r.muted);
  if (active.length === 0) return 0;
  const sites = await siteIndex(db);
  const accounts = await savedAccounts(db, { timeoutMs: 0, perMinute: 0 }).list(workspaceId, sites);
  const facts = await factsOfAll(db, accounts, new Set(active.map((r) => r.kind)), timeZone, now);
  const live = await db.alert.findMany({
    where: { workspaceId, liveKey: { not: null } },
    select: {
      id: true,
      ruleId: true,
      accountId: true,
      state: true,
      notified: true,
      notifiedAt: true,
      clearing: true,
      openedAt: true,
    },
  });
  const byKey = new Map<string, AlertRow>(live.map((a) => [`${a.ruleId}:${a.accountId}`, a]));
  // An account no longer in the workspace leaves no alert open (removal ends them; this mends any left).
  const kept = new Set(accounts.map((a) => a.id));
  const orphaned = live.filter((a) => !kept.has(a.accountId)).map((a) => a.id);
  if (orphaned.length > 0) {
    await db.alert.updateMany({
      where: { id: { in: orphaned } },
      data: { state: "resolved", resolvedAt: now, liveKey: null, clearing: false },
    });
  }
  let events = 0;
  for (const rule of active) {
    const scope = rule.accountId === null ? accounts : accounts.filter((a) => a.id === rule.accountId);
    for (const account of scope) {
      const result = check(rule.kind, rule.threshold, facts.get(account.id) as Facts);
      const key = `${rule.id}:${account.id}`;
      const row = byKey.get(key) ?? null;
      const liveAlert: LiveAlert | null = row
        ? {
            state: row.state as LiveAlert["state"],
            notified: row.notified,
            notifiedAt: row.notifiedAt,
            clearing: row.clearing,
          }
        : null;
      const step = nextStep(liveAlert, result, rule, now);
      const site = sites.get(account.siteId)?.name ?? null;
      switch (step.kind) {
        case "none":
          break;
        case "pend":
          await db.alert.create({
            data: {
              ruleId: rule.id,
              workspaceId,
              accountId: account.id,
              kind: rule.kind,
              threshold: rule.threshold,
              state: "pending",
              value: result.value,
              message: result.text,
              since: now,
              liveKey: key,
            },
            select: { id: true },
          });
          break;
        case "drop":
          await db.alert.deleteMany({ where: { id: row?.id ?? 0, state: "pending" } });
          break;
        case "close":
          await db.alert.updateMany({
            where: { id: row?.id ?? 0 },
            data: { state: "resolved", resolvedAt: now, liveKey: null, clearing: false },
          });
          break;
        case "clearing":
        case "hold":
          await db.alert.updateMany({
            where: { id: row?.id ?? 0 },
            data: {
              clearing: step.kind === "clearing",
              ...(result.holds ? { value: result.value, message: result.text } : {}),
            },
          });
          break;
        case "send": {
          const id = row?.id ?? 0;
          const event = step.event;
          const openedAt = event === "opened" ? now : (row?.openedAt ?? now);
          const resolvedAt = event === "resolved" ? now : null;
          const payload = payloadOf(event, { id, openedAt, resolvedAt }, rule, account, site, result, now, timeZone);
          await db.$transaction([
            db.alert.updateMany({
              where: { id },
              data:
                event === "resolved"
                  ? { state: "resolved", resolvedAt: now, liveKey: null, clearing: false }
                  : {
                      state: "open",
                      openedAt,
                      value: result.value,
                      message: result.text,
                      notified: result.value,
                      notifiedAt: now,
                      clearing: false,
                    },
            }),
            ...rule.channels.map((channelId) =>
              db.alertDelivery.create({
                data: { alertId: id, channelId, event, payload, status: "pending", nextAt: now, createdAt: now },
                select: { id: true },
              }),
            ),
          ]);
          events++;
          break;
        }
      }
    }
  }
  return events;
}
