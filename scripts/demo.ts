/**
 * `npm run demo`: the product together with a built-in demo gateway site (a current new-api with a
 * month of usage over several models and tokens, top-ups and tokens), registered as `演示站点`, so
 * a newcomer can sign in at once with the credentials printed below.
 * DEMO_GATEWAY_PORT (default 3090) is where the demo site listens, on 127.0.0.1.
 */
import { newApiUser, startGateway } from "../src/demo/gateway";
import { demoHistory } from "../src/demo/history";
import { closeDb, db } from "../src/server/db/client";
import { siteRegistry } from "../src/server/sites/registry";
import { prepareOrExit } from "./prepare";
import { buildIfNeeded, serveProduction } from "./serve";

const DEMO_SITE = "演示站点";
const DEMO_USER = { id: 1, accessToken: "demo-access-token-0123456789" };

process.env.NEXT_TELEMETRY_DISABLED ??= "1";
await prepareOrExit();

const history = demoHistory({ seed: 2026, days: 30, callsPerDay: 160 });
const gateway = await startGateway({
  family: "new-api",
  users: [
    {
      accessToken: DEMO_USER.accessToken,
      data: newApiUser(DEMO_USER.id, {
        username: "demo",
        display_name: "演示用户",
        group: "vip",
        quota: history.totals.quota,
        used_quota: history.totals.usedQuota,
        request_count: history.totals.requestCount,
      }),
      logs: history.logs,
      tokens: history.tokens,
      topups: history.topups,
    },
  ],
  requireUserHeader: true,
  failureStatus: 401,
  port: Number(process.env.DEMO_GATEWAY_PORT || 3090),
});

const sites = siteRegistry(db());
const existing = (await sites.list()).find((s) => s.name === DEMO_SITE);
const site = existing
  ? existing.url === gateway.url
    ? existing
    : await sites.update(existing.id, { url: gateway.url })
  : await sites.add({ name: DEMO_SITE, url: gateway.url });
await closeDb(db());

buildIfNeeded();

const port = process.env.PORT || "3000";
console.log(`
演示站点已就绪: ${site.name} (${site.url})
打开 http://${process.env.HOST || "127.0.0.1"}:${port} 并使用以下信息登录:
  站点:     ${site.name}
  用户ID:   ${DEMO_USER.id}
  访问令牌: ${DEMO_USER.accessToken}
`);

serveProduction(() => void gateway.close());
