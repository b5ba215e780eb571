import { setOperatorPassword } from "../../src/server/admin/operator";
import { siteRegistry } from "../../src/server/sites/registry";
// Not from ./fixtures: the runner would keep that module as loaded here, before the sites exist.
import { E2E_ADMIN_PASSWORD, E2E_REDEEM_CODE } from "./constants";
import { tempSqlite } from "../support/db";
import { startApp } from "../support/server";
import { FAMILY_LIST, startFamilySite } from "../support/families";
import { startFixture } from "../support/suite";
import { startLegacyGateway } from "../support/gateway";

/**
 * One production server on a store with the stand-in sites, and one on an empty store.
 * Their addresses reach the tests through the environment; the returned function stops all.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const fx = await startFixture();
  const empty = tempSqlite();
  // Sign-ins start ledger backfills; a larger site budget keeps them from slowing the live views under test.
  // The stand-ins are on loopback: a workspace may add one as its own site, as on a private network.
  // They answer in this process, beside the runner: 5 s for a site's answer, because on a loaded
  // 2-core machine a sign-in's call once took longer than 2 s (the hanging site's test waits it out).
  const env = {
    SITE_TIMEOUT_MS: "5000",
    LOGIN_RATE_LIMIT: "0",
    SITE_REQUESTS_PER_MINUTE: "600",
    WORKSPACE_SITES_ALLOW_PRIVATE: "1",
  };
  const [app, emptyApp] = await Promise.all([
    startApp({ ...env, DATABASE_URL: fx.store.url, DATA_DIR: fx.store.dir }),
    startApp({ ...env, DATABASE_URL: empty.url, DATA_DIR: empty.dir }),
  ]);
  // A gateway of its own for the site a test removes (one address is one site).
  const doomed = await startLegacyGateway();
  const removable = await siteRegistry(fx.store.db).add({ name: "即将移除的站点", url: doomed.url });
  // One site of every gateway family, each with a month of history.
  const families = await Promise.all(FAMILY_LIST.map((family, i) => startFamilySite(family, i)));
  for (const f of families) await siteRegistry(fx.store.db).add({ name: `${f.family} 站点`, url: f.gateway.url });
  // A new-api site of its own for the writes (check-in on, two codes), so no other test sees its balance move.
  const acting = await startFamilySite("new-api", 9, {
    status: { checkin_enabled: true },
    checkinReward: 4821,
    codes: [{ key: E2E_REDEEM_CODE, quota: 5_000_000, status: 1, id: 1 }],
  });
  await siteRegistry(fx.store.db).add({ name: "操作测试站点", url: acting.gateway.url });
  // And one for managing tokens, so the records and lists of the other tests stay as they expect.
  const keys = await startFamilySite("new-api", 10);
  await siteRegistry(fx.store.db).add({ name: "令牌测试站点", url: keys.gateway.url });
  // Two gateways no site has yet, for the operator to add (and move one to the other).
  const unregistered = await Promise.all([startFamilySite("new-api", 11), startFamilySite("one-hub", 12)]);
  // And one a workspace adds itself.
  const own = await startFamilySite("new-api", 13, { status: { system_name: "自建中转" } });
  // A new-api site whose account bought a daily plan ten days ago (套餐).
  const planned = await startFamilySite(
    "new-api",
    14,
    { plans: [{ id: 3, title: "团队日卡", price: 29.9, total: 250_000, resetPeriod: "daily" }] },
    { plan: { id: 5, planId: 3, title: "团队日卡", daysAgo: 10, days: 30, dailyUsd: 0.5, price: 29.9 } },
  );
  await siteRegistry(fx.store.db).add({ name: "套餐站点", url: planned.gateway.url });
  // The operator's password on the store with sites (the empty one has none: /admin says how to set it).
  await setOperatorPassword(fx.store.db, E2E_ADMIN_PASSWORD);
  process.env.E2E_URL = app.url;
  process.env.E2E_EMPTY_URL = emptyApp.url;
  process.env.E2E_DB_URL = fx.store.url;
  process.env.E2E_UNREGISTERED = JSON.stringify(unregistered.map((u) => u.gateway.url));
  process.env.E2E_OWN_SITE = JSON.stringify({ url: own.gateway.url, user: { id: own.user.id, token: own.user.token } });
  process.env.E2E_SITES = JSON.stringify({ ...fx.sites, removable: removable.id });
  process.env.E2E_ACTING = JSON.stringify({ user: { id: acting.user.id, token: acting.user.token } });
  process.env.E2E_KEYS = JSON.stringify({ user: { id: keys.user.id, token: keys.user.token } });
  process.env.E2E_PLAN = JSON.stringify({ user: { id: planned.user.id, token: planned.user.token } });
  process.env.E2E_FAMILIES = JSON.stringify(
    families.map((f) => ({
      family: f.family,
      url: f.gateway.url,
      user: { id: f.user.id, token: f.user.token },
      totals: f.history.totals,
      newest: (() => {
        const last = Math.max(...f.history.logs.map((l) => l.createdAt));
        return f.history.logs.filter((l) => l.createdAt === last).map((l) => l.content);
      })(),
      tokenKeys: f.history.tokens.map((t) => t.key),
    })),
  );
  return async () => {
    await Promise.all([app.stop(), emptyApp.stop()]);
    await Promise.all([
      fx.close(),
      empty.cleanup(),
      acting.gateway.close(),
      keys.gateway.close(),
      doomed.close(),
      ...[...families, ...unregistered, own, planned].map((f) => f.gateway.close()),
    ]);
  };
}
