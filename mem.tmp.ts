import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { siteRegistry } from "./src/server/sites/registry";
import { tempSqlite } from "./tests/support/db";
import { ALICE, startLegacyGateway } from "./tests/support/gateway";
import { startApp } from "./tests/support/server";
const rss = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024);
const gw = await startLegacyGateway();
const store = tempSqlite();
const site = await siteRegistry(store.db).add({ name: "x", url: gw.url });
const app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir, LOGIN_RATE_LIMIT: "1000000" });
console.log("idle", rss(app.pid));
const res = await fetch(`${app.url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ userId: ALICE.id, accessToken: ALICE.token, siteId: site.id }) });
const body = await res.json() as { data: { sessionToken: string } };
console.log("after login", rss(app.pid));
for (let i = 0; i < 3; i++) {
  await autocannon({ url: `${app.url}/api/auth/me`, headers: { authorization: `Bearer ${body.data.sessionToken}` }, connections: 10, duration: 3 });
  console.log("after load", rss(app.pid));
}
await autocannon({ url: `${app.url}/api/auth/me`, headers: { authorization: `Bearer ${body.data.sessionToken}` }, connections: 50, duration: 3 });
console.log("after 50", rss(app.pid));
await app.stop(); await gw.close(); await store.cleanup();
