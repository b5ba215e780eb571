/**
 * Alerts for `npm run bench`: evaluating every rule kind for 1,000 saved accounts (5 workspaces of
 * 200 on 10 sites, each account with 8 days of ledger and balance snapshots) as the runner does
 * after a sync round, on the store given; and a channel that hangs beside a ledger sync (delivery
 * has its own timer and limits, so a sync takes as long as without it).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { alertChannels } from "../src/server/alerts/channels";
import { alertRules } from "../src/server/alerts/rules";
import { deliverDue } from "../src/server/alerts/deliver";
import { RULE_KINDS } from "../src/server/alerts/engine";
import { evaluateAlerts } from "../src/server/jobs/alerts";
import { ledgerStore, type EntryRow } from "../src/server/ledger/store";
import { siteRegistry } from "../src/server/sites/registry";
import { tempPostgres, tempSqlite, type TempDb } from "../tests/support/db";

const WORKSPACES = 5;
const PER_WORKSPACE = 200;
const SITES = 10;
const DAYS = 8;
const CALLS_PER_DAY = 24;
const SNAPSHOTS_PER_DAY = 6;

export type AlertFigures = {
  kind: string;
  accounts: number;
  rules: number;
  entries: number;
  /** Median of the timed evaluations (the first, which opens every pending alert, not counted). */
  evaluateMs: number;
  /** The same evaluation with only the three default rules. */
  defaultsMs: number;
  /** The evaluation while a delivery to a channel that never answers is under way. */
  besideHangingMs: number;
  /** That delivery: how long until it gave up. */
  hangingDeliveryMs: number;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function seed(store: TempDb, now: number): Promise<{ entries: number; rules: number }> {
  const db = store.db;
  const sites: number[] = [];
  for (let s = 0; s < SITES; s++) {
    const site = await siteRegistry(db).add({ name: `基准站点 ${s + 1}`, url: `http://127.0.0.1:${20000 + s}` });
    sites.push(site.id);
  }
  const nowS = Math.floor(now / 1000);
  let entries = 0;
  let rules = 0;
  for (let w = 0; w < WORKSPACES; w++) {
    const workspace = await db.workspace.create({
      data: {
        name: `基准工作区 ${w + 1}`,
        nameKey: `bench-${w + 1}`,
        passwordHash: "x",
        createdAt: new Date(now),
        passwordChangedAt: new Date(now),
      },
      select: { id: true },
    });
    const accounts = Array.from({ length: PER_WORKSPACE }, (_, i) => {
      const n = w * PER_WORKSPACE + i;
      return {
        workspaceId: workspace.id,
        siteId: sites[n % SITES]!,
        siteUserId: BigInt(1000 + n),
        siteUrl: `http://127.0.0.1:${20000 + (n % SITES)}`,
        userId: String(1000 + n),
        accessToken: "sealed",
        username: `user${n}`,
        displayName: `账户 ${n}`,
        tags: "[]",
        position: i,
        state: n % 50 === 0 ? "reauth" : "ok",
        stateAt: new Date(now),
        createdAt: new Date(now - DAYS * 86_400_000),
        autoCheckin: n % 4 === 0,
      };
    });
    await db.workspaceAccount.createMany({ data: accounts });
    // Every kind of rule for all accounts: the three defaults and the other five.
    const r = alertRules(db);
    await r.settings(workspace.id, new Date(now));
    const thresholds: Record<string, number | null> = {
      balance_below: 5,
      spend_today_above: 3,
      checkin_failed: null,
      unmatched_move: 0.5,
      spend_spike: 3,
    };
    for (const kind of RULE_KINDS) {
      if (!(kind in thresholds)) continue;
      await r.create(workspace.id, { kind, account: "all", threshold: thresholds[kind] }, new Date(now));
    }
    rules += (await r.list(workspace.id)).length;
    for (const a of accounts) {
      const owner = { siteId: a.siteId, siteUserId: Number(a.siteUserId) };
      await db.ledgerSync.create({
        data: {
          ...owner,
          siteUserId: a.siteUserId,
          holder: "bench",
          leaseUntil: new Date(now + 3_600_000),
          syncedAt: new Date(now),
        },
      });
      const rows: EntryRow[] = [];
      const start = nowS - DAYS * 86_400;
      for (let c = 0; c < DAYS * CALLS_PER_DAY; c++) {
        const at = start + c * Math.floor(86_400 / CALLS_PER_DAY) + (owner.siteUserId % 600);
        if (at >= nowS) break;
        rows.push({
          at,
          fingerprint: `f${c}`,
          ordinal: 0,
          type: "consume",
          model: c % 3 === 0 ? "gpt-4o" : "claude-sonnet-4",
          tokenName: "默认",
          quota: 20_000 + (c % 7) * 5_000,
          promptTokens: 1000,
          completionTokens: 300,
          durationMs: 800,
          stream: false,
          content: "",
          detail: "",
        });
      }
      await ledgerStore(db).commit(owner, rows, "bench", nowS);
      entries += rows.length;
      // Snapshots that follow the log, one of them off by $1 (a deduction it does not show).
      let quota = 50_000_000;
      const snapshots = [];
      for (let d = 0; d < DAYS * SNAPSHOTS_PER_DAY; d++) {
        const at = start + d * Math.floor(86_400 / SNAPSHOTS_PER_DAY) + 7;
        if (at >= nowS) break;
        const spent = rows.filter((e) => e.at > at - 86_400 / SNAPSHOTS_PER_DAY && e.at <= at);
        quota -= spent.reduce((s, e) => s + e.quota, 0);
        if (d === DAYS * SNAPSHOTS_PER_DAY - 3 && owner.siteUserId % 10 === 0) quota -= 500_000;
        snapshots.push({
          ...owner,
          siteUserId: a.siteUserId,
          at,
          quota: BigInt(quota),
          usedQuota: 0n,
          requestCount: 0n,
        });
      }
      await db.balanceSnapshot.createMany({ data: snapshots });
    }
  }
  return { entries, rules };
}

/** A receiver that takes the connection and never answers. */
async function hangingReceiver() {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

export async function benchAlerts(kind: "sqlite" | "postgres"): Promise<AlertFigures> {
  process.env.ALERT_ALLOW_PRIVATE = "1";
  const store = kind === "sqlite" ? tempSqlite() : await tempPostgres();
  try {
    const now = Date.now();
    const { entries, rules } = await seed(store, now);
    const db = store.db;
    // The first evaluation writes every pending alert; the ones after are the steady state.
    await evaluateAlerts(db, new Date(now));
    const times: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const t = performance.now();
      await evaluateAlerts(db, new Date(now + i * 60_000));
      times.push(performance.now() - t);
    }
    // Only the defaults: the other rules muted.
    await db.alertRule.updateMany({
      where: { kind: { notIn: ["days_left_below", "token_refused", "site_down"] } },
      data: { muted: true },
    });
    const defaults: number[] = [];
    for (let i = 6; i <= 10; i++) {
      const t = performance.now();
      await evaluateAlerts(db, new Date(now + i * 60_000));
      defaults.push(performance.now() - t);
    }
    // A channel that never answers, delivered while the rules are evaluated: the evaluation takes
    // as long as without it, and the delivery gives up at ALERT_TIMEOUT_MS on its own timer.
    const receiver = await hangingReceiver();
    const ws = await db.workspace.findFirstOrThrow({ select: { id: true } });
    const { channel } = await alertChannels(db).create(ws.id, { type: "webhook", name: "挂起", url: receiver.url });
    await db.alertDelivery.create({
      data: {
        channelId: channel.id,
        event: "test",
        payload: JSON.stringify({ event: "test", at: new Date(now).toISOString() }),
        status: "pending",
        nextAt: new Date(now),
        createdAt: new Date(now),
      },
    });
    const at = new Date(now + 11 * 60_000);
    const t0 = performance.now();
    const delivering = deliverDue(db, at).then(() => performance.now() - t0);
    const t1 = performance.now();
    await evaluateAlerts(db, at);
    const besideHangingMs = performance.now() - t1;
    const hangingDeliveryMs = await delivering;
    receiver.close();
    return {
      kind,
      accounts: WORKSPACES * PER_WORKSPACE,
      rules,
      entries,
      evaluateMs: median(times),
      defaultsMs: median(defaults),
      besideHangingMs,
      hangingDeliveryMs,
    };
  } finally {
    await store.cleanup();
  }
}

export function alertLines(results: AlertFigures[]): string[] {
  const ok = (pass: boolean) => (pass ? "✅" : "❌");
  const first = results[0];
  if (!first) return [];
  return [
    "",
    `Alerts: ${first.accounts} saved accounts in ${WORKSPACES} workspaces, ${first.rules / WORKSPACES} rules each (every kind, for all accounts), ` +
      `${first.entries} ledger entries over ${DAYS} days (median of 5 evaluations after the first)`,
    "",
    `| figure | goal | ${results.map((r) => r.kind).join(" | ")} |`,
    `|---|---|${results.map(() => "---|").join("")}`,
    `| evaluating every rule for every account | < 1000 ms | ${results.map((r) => `${ok(r.evaluateMs < 1000)} ${Math.round(r.evaluateMs)} ms`).join(" | ")} |`,
    `| the same with the three default rules only | report | ${results.map((r) => `${Math.round(r.defaultsMs)} ms`).join(" | ")} |`,
    `| the defaults' evaluation while a delivery hangs ÷ without | ≈ 1 | ${results.map((r) => `${(r.besideHangingMs / r.defaultsMs).toFixed(2)} (${Math.round(r.besideHangingMs)} ms)`).join(" | ")} |`,
    `| that delivery, to a receiver that never answers (ALERT_TIMEOUT_MS 5000) | gives up ≈ 5000 ms | ${results.map((r) => `${Math.round(r.hangingDeliveryMs)} ms`).join(" | ")} |`,
  ];
}
