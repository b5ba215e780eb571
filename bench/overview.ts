/** The overview of 20 accounts on 20 sites, and with one of them hanging. */
import { siteRegistry } from "../src/server/sites/registry";
import { tempSqlite } from "../tests/support/db";
import { startApp, type RunningApp } from "../tests/support/server";
import { newApiUser, startGateway } from "../src/demo/gateway";
import { demoHistory } from "../src/demo/history";
import { createTRPCClient, httpBatchStreamLink } from "@trpc/client";
import type { AppRouter } from "../src/server/api/root";
import { median, timed } from "./common";

/**
 * The overview of 20 accounts on 20 stand-in sites that each answer in 200 ms, against one 200 ms
 * call; then with one site hanging, how soon the other 19 rows are shown (as the page fills them).
 */
export async function benchOverview() {
  const SITES = 20;
  const LATENCY = 200;
  let hang = false;
  const gateways = await Promise.all(
    Array.from({ length: SITES }, (_, i) => {
      const h = demoHistory({ seed: 700 + i, days: 3, callsPerDay: 30 });
      return startGateway({
        family: "new-api",
        latencyMs: LATENCY,
        users: [
          {
            accessToken: `bench-overview-${i}-0123456789abcdef`,
            data: newApiUser(600 + i),
            logs: h.logs,
            tokens: h.tokens,
            topups: h.topups,
          },
        ],
        // The last site hangs on everything but sign-in while `hang` is set.
        intercept: (req) => i === SITES - 1 && hang && !(req.url ?? "").startsWith("/api/user/self"),
      });
    }),
  );
  const store = tempSqlite();
  let app: RunningApp | undefined;
  try {
    app = await startApp({
      DATABASE_URL: store.url,
      DATA_DIR: store.dir,
      LOGIN_RATE_LIMIT: "0",
      SESSION_PASSWORD: "bench-password-0123456789-abcdefghijklmnop",
    });
    const base = app.url;
    let cookie = "";
    for (const [i, g] of gateways.entries()) {
      const { id } = await siteRegistry(store.db).add({ name: `站点 ${i + 1}`, url: g.url });
      const res = await fetch(`${base}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) },
        body: JSON.stringify({ userId: 600 + i, accessToken: `bench-overview-${i}-0123456789abcdef`, siteId: id }),
      });
      cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? cookie;
    }
    const overview = () =>
      fetch(`${base}/api/accounts/overview?refresh=1`, { headers: { cookie } }).then(
        (r) => r.json() as Promise<{ data: { rows: { key: string; state: string; site: { name: string } }[] } }>,
      );
    const first = await overview(); // probes every site once (then fresh for an hour)
    // Rows come most recently used first: the hanging site (the last signed in) by its name.
    const hangingName = `站点 ${SITES}`;
    const keys = first.data.rows.filter((r) => r.site.name !== hangingName).map((r) => r.key);
    const hangingKey = first.data.rows.find((r) => r.site.name === hangingName)?.key ?? "";
    const single = () =>
      fetch(`${gateways[0]?.url}/api/user/self`, {
        headers: { authorization: "bench-overview-0-0123456789abcdef", "new-api-user": "600" },
      }).then((r) => r.json());
    const singles: number[] = [];
    const whole: number[] = [];
    let okRows = 0;
    for (let r = 0; r < 5; r++) {
      singles.push(await timed(single));
      const t = performance.now();
      const answer = await overview();
      whole.push(performance.now() - t);
      okRows = answer.data.rows.filter((x) => x.state === "ok").length;
    }
    // One site hangs: the page asks for the rows side by side through the streaming batch link
    // (10 a batch), each row arriving as its site answers; when are the other 19 shown?
    hang = true;
    const client = createTRPCClient<AppRouter>({
      links: [httpBatchStreamLink({ url: `${base}/api/trpc`, maxItems: 10, headers: { cookie } })],
    });
    const row = (key: string) =>
      client.account.overviewRow.query({ key, refresh: true }).then((data) => ({ result: { data } }));
    const nineteen: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t = performance.now();
      const done: number[] = [];
      // The hanging row is asked with the others (as the page does) and left to time out on its own.
      void row(hangingKey).catch(() => undefined);
      await Promise.all(
        keys.map(async (key) => {
          const answer = await row(key);
          if (answer.result?.data.state === "ok") done.push(performance.now() - t);
        }),
      );
      nineteen.push(done.length === SITES - 1 ? Math.max(...done) : Number.POSITIVE_INFINITY);
    }
    return { single: median(singles), whole: median(whole), okRows, nineteen: median(nineteen) };
  } finally {
    await app?.stop();
    await Promise.all(gateways.map((g) => g.close()));
    await store.cleanup();
  }
}
