/**
 * `npm run demo`: the product together with two built-in demo gateway sites, a current new-api
 * (`演示站点`, two accounts) and a one-hub (`演示站点（one-hub）`, one account), each account with a
 * month of usage over several models and tokens, top-ups and tokens, so a newcomer can sign in at
 * once with the credentials printed below and add the others to see 全部账户, or sign in to the
 * demo workspace (printed too) that holds all three.
 * DEMO_GATEWAY_PORT (default 3090, and the next port) is where the demo sites listen, on 127.0.0.1;
 * the port after them is the demo's notification inbox (alerts and digests of the demo workspace).
 */
import { createServer } from "node:http";
import path from "node:path";
import { newApiUser, startGateway } from "../src/demo/gateway";
import { alertChannels } from "../src/server/alerts/channels";
import { alertDigests } from "../src/server/alerts/digests";
import { alertRules } from "../src/server/alerts/rules";
import { demoHistory, demoPricing, MODELS } from "../src/demo/history";
import { setOperatorPassword } from "../src/server/admin/operator";
import { verifyPassword } from "../src/server/core/password";
import { closeDb, db } from "../src/server/db/client";
import { env } from "../src/server/core/env";
import { siteRegistry, type Site } from "../src/server/sites/registry";
import { seedBalanceHistory } from "../src/server/ledger/balance-history";
import { parsePrices } from "../src/server/gateway/prices";
import { priceStore } from "../src/server/prices/store";
import { savedAccounts } from "../src/server/workspace/saved-accounts";
import { hubStore } from "../src/server/hub/store";
import { hubSync } from "../src/server/hub/sync";
import { workspaceSites } from "../src/server/sites/workspace-sites";
import { hashWorkspaceToken, workspaceStore } from "../src/server/workspace/workspaces";
import { prepareOrExit } from "./prepare";
import { buildIfNeeded, serveProduction } from "./serve";

/**
 * Three demo sites of different families, four accounts: enough to try every page, 全部账户
 * included. The third is not registered: the demo workspace added it itself (`own`).
 */
const DEMO_PORT = Number(process.env.DEMO_GATEWAY_PORT || 3090);
const DEMO_SITES = [
  {
    name: "演示站点",
    family: "new-api" as const,
    port: DEMO_PORT,
    // Daily check-in on, as new-api sites that have it show in their status.
    status: { checkin_enabled: true },
    users: [
      { id: 1, accessToken: "demo-access-token-0123456789", username: "demo", displayName: "演示用户", seed: 2026 },
      { id: 2, accessToken: "demo-access-token-team-abcdef", username: "team", displayName: "团队账户", seed: 7 },
    ],
  },
  {
    name: "演示站点（one-hub）",
    family: "one-hub" as const,
    port: DEMO_PORT + 1,
    status: {},
    users: [
      { id: 7, accessToken: "demo-access-token-hub-fedcba98", username: "alice", displayName: "Alice", seed: 99 },
    ],
  },
  {
    name: "自建中转",
    family: "veloera" as const,
    // DEMO_PORT + 2 is the notification inbox.
    port: DEMO_PORT + 3,
    status: { system_name: "自建中转" },
    own: true,
    users: [
      { id: 3, accessToken: "demo-access-token-relay-13579", username: "relay", displayName: "中转账户", seed: 11 },
    ],
  },
];

/** Redeem codes of the demo sites ($10, $5, $20 each), to try 账户操作 with; spent as they are used. */
const DEMO_CODES = [
  { key: "DEMO-REDEEM-10-USD-0001", quota: 5_000_000 },
  { key: "DEMO-REDEEM-05-USD-0002", quota: 2_500_000 },
  { key: "DEMO-REDEEM-20-USD-0003", quota: 10_000_000 },
];

/**
 * The one-hub's price factors now and before (the first run keeps the earlier lists as its price
 * history): Claude 10% cheaper 20 days ago, GPT-4o 10% dearer today (the demo's 所用模型涨价 rule
 * tells of it).
 */
const HUB_PRICES_NOW = { "claude-sonnet-4": 0.8, "gpt-4o": 1.1, "deepseek-chat": 0.9 };
const HUB_PRICES_BEFORE: Array<{ daysAgo: number; factor: Record<string, number> }> = [
  { daysAgo: 30, factor: { "claude-sonnet-4": 0.9, "gpt-4o": 1, "deepseek-chat": 0.9 } },
  { daysAgo: 20, factor: { "claude-sonnet-4": 0.8, "gpt-4o": 1, "deepseek-chat": 0.9 } },
];

/** The new-api site's plan: $0.20 a day for 30 days, reset at midnight, bought by the team account. */
const DEMO_PLAN = { id: 1, planId: 1, title: "团队日卡", daysAgo: 10, days: 30, dailyUsd: 0.2, price: 4.9 };

process.env.NEXT_TELEMETRY_DISABLED ??= "1";
// This process's own work (the demo sites, the accounts saved) logs only errors; the server keeps
// the level asked for, its lines going to its log file.
const serverLogLevel = process.env.LOG_LEVEL;
process.env.LOG_LEVEL = "error";
// The demo sites are on this machine: a larger budget lets each account's first ledger backfill
// (at sign-in) finish in seconds instead of a couple of minutes.
process.env.SITE_REQUESTS_PER_MINUTE ??= "600";
const port = process.env.PORT || "3000";
const here = `http://${process.env.HOST || "127.0.0.1"}:${port}`;
// The demo's notification inbox is on this machine too, and the site the workspace added itself.
process.env.ALERT_ALLOW_PRIVATE ??= "1";
process.env.WORKSPACE_SITES_ALLOW_PRIVATE ??= "1";
await prepareOrExit();

/** Each demo account's history, by "port:user id": its balance history is kept as snapshots. */
const histories = new Map<string, ReturnType<typeof demoHistory>>();
const gateways = await Promise.all(
  DEMO_SITES.map((demo) =>
    startGateway({
      family: demo.family,
      status: demo.status,
      port: demo.port,
      codes: DEMO_CODES.map((c, n) => ({ ...c, status: 1 as const, id: n + 1 })),
      checkinReward: 4821,
      // Prices differ between the sites: the one-hub is cheaper for Claude, dearer for GPT-4o.
      pricing: demo.family === "one-hub" ? demoPricing("one-hub", HUB_PRICES_NOW) : demoPricing("new-api"),
      failureStatus: demo.family === "new-api" ? 401 : 200,
      plans:
        demo.family === "new-api"
          ? [
              {
                id: DEMO_PLAN.planId,
                title: DEMO_PLAN.title,
                price: DEMO_PLAN.price,
                total: 100_000,
                resetPeriod: "daily" as const,
              },
            ]
          : [],
      users: demo.users.map((u) => {
        const history = demoHistory({
          seed: u.seed,
          days: 30,
          callsPerDay: u.id === 1 ? 160 : 60,
          // The main account's site once charged $1.50 its log never showed: 对账 marks that day.
          ...(demo.family === "new-api" && u.id === 1 ? { unlogged: { daysAgo: 4, usd: 1.5 } } : {}),
          // The team account bought the site's daily plan ten days ago: 套餐 shows it.
          ...(demo.family === "new-api" && u.id === 2 ? { plan: DEMO_PLAN } : {}),
        });
        histories.set(`${demo.port}:${u.id}`, history);
        return {
          accessToken: u.accessToken,
          data: newApiUser(u.id, {
            username: u.username,
            display_name: u.displayName,
            group: u.id === 1 ? "vip" : "default",
            quota: history.totals.quota,
            used_quota: history.totals.usedQuota,
            request_count: history.totals.requestCount,
          }),
          logs: history.logs,
          models: [...MODELS.map((m) => m.name), ...(demo.family === "new-api" && u.id === 1 ? ["dall-e-3"] : [])],
          tokens: history.tokens,
          topups: history.topups,
          subscriptions: history.subscription ? [history.subscription] : [],
        };
      }),
    }),
  ),
);

const sites = siteRegistry(db());
const registered: Array<Site | undefined> = [];
for (const [i, demo] of DEMO_SITES.entries()) {
  const url = gateways[i]?.url ?? "";
  // The workspace adds its own site below.
  if ("own" in demo) {
    registered.push(undefined);
    continue;
  }
  const existing = (await sites.list()).find((s) => s.name === demo.name);
  registered.push(
    existing
      ? existing.url === url
        ? existing
        : await sites.update(existing.id, { url })
      : await sites.add({ name: demo.name, url }),
  );
}
// Each account's month of balances, as if it had been watched all along (the first run only).
for (const [i, demo] of DEMO_SITES.entries()) {
  for (const u of demo.users) {
    const history = histories.get(`${demo.port}:${u.id}`);
    const site = registered[i];
    if (history && site) await seedBalanceHistory(db(), { siteId: site.id, siteUserId: u.id }, history.balances);
  }
}
// The one-hub's earlier price lists (the first run only): its history on 模型价格.
const hub = registered[DEMO_SITES.findIndex((d) => d.family === "one-hub")];
if (hub && !(await priceStore(db()).siteReads([hub.id])).has(hub.id)) {
  for (const { daysAgo, factor } of HUB_PRICES_BEFORE) {
    // The demo sites count 500,000 quota units a dollar (demoPricing).
    const prices = parsePrices("one-hub", demoPricing("one-hub", factor), 500_000);
    await priceStore(db()).recordSite(
      hub.id,
      { prices, published: true, groupRatios: { default: 1 } },
      new Date(Date.now() - daysAgo * 86_400_000),
    );
  }
}
// The operator's page too: a known password, set only when none is (a real one is never replaced).
const DEMO_ADMIN_PASSWORD = "demo-admin-password";
const operator = await db().operator.findUnique({ where: { id: 1 } });
if (!operator) await setOperatorPassword(db(), DEMO_ADMIN_PASSWORD, "演示");
const adminPassword =
  !operator || (await verifyPassword(DEMO_ADMIN_PASSWORD, operator.passwordHash)) ? DEMO_ADMIN_PASSWORD : null;

// A workspace holding every demo account, so a newcomer sees them on any device at once.
const DEMO_WORKSPACE = { name: "演示工作区", password: "demo-workspace-password" };
const workspaces = workspaceStore(db());
/** The demo workspace: made on the first run (its sign-in session ended at once), found after. */
async function demoWorkspace() {
  const found = await workspaces.verify(DEMO_WORKSPACE.name, DEMO_WORKSPACE.password);
  if (found) return found;
  try {
    const opened = await workspaces.register(DEMO_WORKSPACE, { userAgent: "demo", address: null }, { required: false });
    await workspaces.end(hashWorkspaceToken(opened.token));
    return opened.workspace;
  } catch {
    // The name is someone's with another password: no demo workspace then.
    return null;
  }
}
const workspace = await demoWorkspace();
if (workspace) {
  // A site the workspace added itself (the operator never registered it), with its history.
  const own = DEMO_SITES.findIndex((d) => "own" in d);
  const ownUrl = gateways[own]?.url ?? "";
  const mine = workspaceSites(db());
  registered[own] =
    (await mine.list(workspace.id)).find((s) => s.url === ownUrl) ??
    (await mine.add(workspace.id, ownUrl, { timeoutMs: 10_000, perMinute: 600 }));
  for (const u of DEMO_SITES[own]?.users ?? []) {
    const history = histories.get(`${DEMO_SITES[own]?.port}:${u.id}`);
    const site = registered[own];
    if (history && site) await seedBalanceHistory(db(), { siteId: site.id, siteUserId: u.id }, history.balances);
  }
  const saved = savedAccounts(db(), { timeoutMs: 10_000, perMinute: 600 });
  const aliases = ["主力号", "团队", "海外", "自建"];
  for (const [i, demo] of DEMO_SITES.entries()) {
    for (const u of demo.users) {
      const alias = aliases.shift() ?? null;
      const outcome = await saved.add(workspace.id, {
        siteId: registered[i]?.id ?? 0,
        userId: u.id,
        accessToken: u.accessToken,
        alias,
        tags: u.id === 2 ? ["团队"] : ["个人"],
      });
      // The main account checks in by itself every day (its site has check-in on).
      if (outcome.ok && i === 0 && alias === "主力号") {
        await saved.update(workspace.id, outcome.account.id, { autoCheckin: true });
      }
    }
  }
}
// Alerts and digests of the workspace go to a local inbox (an ntfy-style topic) the demo serves.
const inbox = await startInbox(DEMO_PORT + 2);
if (workspace) await demoAlerts(workspace.id, `${inbox.url}/demo`);
if (workspace) await demoHubSync(workspace.id, registered[0]?.url ?? "");
await closeDb(db());

await buildIfNeeded();

const lines = DEMO_SITES.flatMap((demo, i) =>
  "own" in demo ? [] : demo.users.map((u) => `  ${registered[i]?.name}  用户ID ${u.id}  访问令牌 ${u.accessToken}`),
);
// The server's request log goes to a file; how to sign in is the last thing the terminal shows.
const logFile = path.resolve(env().DATA_DIR, "demo-server.log");
const howTo = `
演示站点已就绪: ${registered.flatMap((s) => (s ? [`${s.name} (${s.url})`] : [])).join("，")}
打开 http://${process.env.HOST || "127.0.0.1"}:${port} 并使用以下任一账户登录，再从账户菜单「添加账户」登录其余的:
${lines.join("\n")}
在「概览」的「账户操作」中可以签到（演示站点），或兑换演示兑换码（每个站点各一次）: ${DEMO_CODES.map((c) => c.key).join("、")}
${
  workspace
    ? `工作区（保存了全部演示账户，任何设备登录即可看到；「自建中转」是它自行添加的站点）: http://${process.env.HOST || "127.0.0.1"}:${port}/workspace  名称 ${DEMO_WORKSPACE.name}  密码 ${DEMO_WORKSPACE.password}\n`
    : ""
}All API Hub 同步：工作区的「工作区」页创建同步凭据，扩展的 WebDAV 地址填 http://${process.env.HOST || "127.0.0.1"}:${port}/dav/
提醒与摘要的演示收件箱（工作区「提醒」页的渠道发到这里）: ${inbox.url}/
站点管理: http://${process.env.HOST || "127.0.0.1"}:${port}/admin ${adminPassword ? `管理员密码 ${adminPassword}` : "（使用已设置的管理员密码）"}
服务器日志（每个请求一行）: ${logFile}
`;

if (serverLogLevel === undefined) delete process.env.LOG_LEVEL;
else process.env.LOG_LEVEL = serverLogLevel;
serveProduction(() => void Promise.all([...gateways.map((g) => g.close()), inbox.close()]), {
  logFile,
  onListening: () => console.log(howTo),
});

/**
 * The demo's notification inbox: takes ntfy-style POSTs (the title in the Title header, the text
 * as the body) and lists them, newest first, on GET /.
 */
async function startInbox(inboxPort: number) {
  const received: Array<{ at: string; title: string; body: string }> = [];
  const server = createServer((req, res) => {
    if (req.method === "POST") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = String(req.headers.title ?? "");
        // ntfy's RFC 2047 form: =?UTF-8?B?…?=
        const encoded = /^=\?UTF-8\?B\?(.*)\?=$/.exec(raw)?.[1];
        const title = encoded ? Buffer.from(encoded, "base64").toString("utf8") : raw;
        received.unshift({ at: new Date().toISOString(), title, body: Buffer.concat(chunks).toString("utf8") });
        received.splice(200);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: String(received.length), event: "message" }));
      });
      return;
    }
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    res.end(
      received.length === 0
        ? "演示收件箱：还没有消息。提醒打开、恢复时，或摘要到点（或在「提醒」页按「立即发送」）时会出现在这里。\n"
        : received.map((m) => `${m.at}  ${m.title}\n${m.body}\n`).join("\n----\n\n"),
    );
  });
  await new Promise<void>((resolve) => server.listen(inboxPort, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${inboxPort}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The demo workspace's channel, its rules told to it, and a daily and a monthly digest (the first run only). */
async function demoAlerts(workspaceId: number, inboxUrl: string) {
  const channels = alertChannels(db());
  if ((await channels.list(workspaceId)).length > 0) return;
  const { channel } = await channels.create(workspaceId, { type: "ntfy", name: "演示收件箱", url: inboxUrl });
  const rules = alertRules(db());
  await rules.settings(workspaceId);
  for (const rule of await rules.list(workspaceId))
    await rules.update(workspaceId, rule.id, { channels: [channel.id] });
  await rules.create(workspaceId, { kind: "unmatched_move", account: "all", threshold: 1, channels: [channel.id] });
  await rules.create(workspaceId, { kind: "balance_below", account: "all", threshold: 5, channels: [channel.id] });
  await rules.create(workspaceId, { kind: "price_changed", account: "all", threshold: 5, channels: [channel.id] });
  // The one-hub bills Claude above its own list: 核对 finds it, and this rule tells of it.
  await rules.create(workspaceId, {
    kind: "overcharged_above",
    account: "all",
    threshold: 0.01,
    channels: [channel.id],
  });
  const digests = alertDigests(db());
  await digests.set(workspaceId, { cadence: "daily", time: "09:00", channels: [channel.id] }, here);
  await digests.set(workspaceId, { cadence: "monthly", time: "09:00", channels: [channel.id] }, here);
}

/**
 * The demo workspace's All API Hub sync (the first run only): one write of an extension that holds
 * the main account and one it signs in to with a cookie, with its tags, notes and a bookmark.
 */
async function demoHubSync(workspaceId: number, siteUrl: string) {
  if ((await hubStore(db()).runs(workspaceId, 1)).length > 0) return;
  const at = Date.now() - 3_600_000;
  const user = DEMO_SITES[0]?.users[0];
  if (!user) return;
  const record = (id: string, more: Record<string, unknown>) => ({
    id,
    site_url: siteUrl,
    site_type: "new-api",
    health: { status: "healthy" },
    exchange_rate: 7.2,
    last_sync_time: at,
    updated_at: at,
    user_updated_at: at,
    created_at: at - 86_400_000,
    notes: "",
    tagIds: [],
    disabled: false,
    excludeFromTotalBalance: false,
    excludeFromTodayIncome: false,
    checkIn: { automaticExecutionEnabled: true, methodKnowledge: { methods: {} }, selection: { mode: "automatic" } },
    configVersion: 7,
    ...more,
  });
  const file = {
    version: "4.0",
    timestamp: at,
    channelConfigs: { schemaVersion: 1, configs: {} },
    accounts: {
      accounts: [
        record("account-demo-main", {
          site_name: "演示站点",
          notes: "主力",
          tagIds: ["tag-demo"],
          authType: "access_token",
          account_info: { id: String(user.id), access_token: user.accessToken, username: user.username, quota: 0 },
        }),
        record("account-demo-cookie", {
          site_name: "公益站",
          authType: "cookie",
          cookieAuth: { sessionCookie: "session=demo" },
          account_info: { id: "42", access_token: "", username: "guest", quota: 0 },
        }),
      ],
      bookmarks: [
        {
          id: "bookmark-demo",
          name: "状态页",
          url: `${siteUrl}/status`,
          tagIds: [],
          notes: "",
          created_at: at,
          updated_at: at,
        },
      ],
      pinnedAccountIds: ["account-demo-main"],
      orderedAccountIds: ["account-demo-main", "account-demo-cookie", "bookmark-demo"],
      deletedEntryRecords: {},
      last_updated: at,
    },
    tagStore: { version: 1, tagsById: { "tag-demo": { id: "tag-demo", name: "常用", createdAt: at, updatedAt: at } } },
  };
  const saved = savedAccounts(db(), { timeoutMs: 10_000, perMinute: 600 });
  await hubSync(db(), { accounts: saved, probe: { timeoutMs: 10_000, perMinute: 600 } }).write(
    workspaceId,
    JSON.stringify(file, null, 2),
  );
}
