/** The session check, the sign-in and cached site data, on one store, each ratio side by side. */
import { siteRegistry } from "../src/server/sites/registry";
import { tempPostgres, tempSqlite, type TempDb } from "../tests/support/db";
import { ALICE, startLegacyGateway } from "../tests/support/gateway";
import { startApp, type RunningApp } from "../tests/support/server";
import { signInOverHttp } from "../tests/support/http";
import { startFamilySite } from "../tests/support/families";
import { ROUNDS, LOGIN_SAMPLES, MANY, MANY_LIVE, Run, load, median, rssMb, fill, signIn, timed } from "./common";

export async function bench(kind: "sqlite" | "postgres") {
  const gateway = await startLegacyGateway();
  const family = await startFamilySite("new-api", 0);
  const temp = async () => (kind === "sqlite" ? tempSqlite() : await tempPostgres());
  // The large store's server is measured against a twin on a store of 10 that, like it, answers
  // nothing but `me`, at the same moments: the small store's server also answers the other loads
  // of each round, and a server measured alone meets the machine as it is then.
  const stores = [await temp(), await temp(), await temp()];
  const [small, large, twin] = stores as [TempDb, TempDb, TempDb];
  const apps: RunningApp[] = [];
  try {
    const siteIds: number[] = [];
    for (const s of stores) siteIds.push((await siteRegistry(s.db).add({ name: "bench", url: gateway.url })).id);
    const familySiteId = (await siteRegistry(small.db).add({ name: "new-api", url: family.gateway.url })).id;
    await fill(large, MANY, MANY_LIVE);
    await fill(twin, 9, 9);
    // Sign-ins count against the site's budget: lifted here, where what is timed is our own cost
    // (and no sign-in starts a ledger backfill that would share the two cores with it).
    const env = {
      LOGIN_RATE_LIMIT: "1000000",
      SITE_REQUESTS_PER_MINUTE: "100000",
      LEDGER_SYNC_MINUTES: "0",
      SESSION_PASSWORD: "bench-password-0123456789-abcdefghijklmnop",
    };
    const [a, b, c] = await Promise.all([
      startApp({ ...env, DATABASE_URL: small.url, DATA_DIR: small.dir }),
      startApp({ ...env, DATABASE_URL: large.url, DATA_DIR: large.dir }),
      startApp({ ...env, DATABASE_URL: twin.url, DATA_DIR: twin.dir }),
    ]);
    apps.push(a, b, c);
    const sa = await signIn(a, siteIds[0] ?? 1);
    for (let i = 0; i < 9; i++) await signIn(a, siteIds[0] ?? 1); // 10 sessions in the small store
    const sb = await signIn(b, siteIds[1] ?? 1);
    const sc = await signIn(c, siteIds[2] ?? 1); // with the 9 filled, 10 sessions in the twin
    const me = (app: RunningApp) => `${app.url}/api/auth/me`;
    const account = await signInOverHttp(a.url, {
      userId: family.user.id,
      accessToken: family.user.token,
      siteId: familySiteId,
    });
    const accountAuth = { authorization: `Bearer ${account.token}` };
    const summaryUrl = `${a.url}/api/account/summary?tz=Asia%2FShanghai`;
    const logsUrl = `${a.url}/api/account/logs?page=1&pageSize=20`;

    // Warm the servers (JIT, connection pools) before measuring.
    await load(me(a), { authorization: `Bearer ${sa.token}` });
    await load(me(b), { authorization: `Bearer ${sb.token}` });
    await load(me(c), { authorization: `Bearer ${sc.token}` });
    await load(summaryUrl, accountAuth);
    await load(logsUrl, accountAuth);

    const rounds: Record<"none" | "bearer" | "cookie" | "few" | "many" | "summary" | "logs", Run[]> = {
      none: [],
      bearer: [],
      cookie: [],
      few: [],
      many: [],
      summary: [],
      logs: [],
    };
    /** `me` on the large store ÷ on its twin of 10, round by round. */
    const pairs: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      rounds.none.push(await load(me(a), {}));
      rounds.summary.push(await load(summaryUrl, accountAuth));
      rounds.logs.push(await load(logsUrl, accountAuth));
      rounds.cookie.push(await load(me(a), { cookie: sa.cookie }));
      rounds.bearer.push(await load(me(a), { authorization: `Bearer ${sa.token}` }));
      // The two stores side by side at the same moments: both servers share whatever the machine
      // is doing then, and each round's ratio is taken within it.
      const [few, many] = await Promise.all([
        load(me(c), { authorization: `Bearer ${sc.token}` }, 5),
        load(me(b), { authorization: `Bearer ${sb.token}` }, 5),
      ]);
      rounds.few.push(few);
      rounds.many.push(many);
      pairs.push((rounds.many.at(-1)?.rps ?? 0) / Math.max(1, rounds.few.at(-1)?.rps ?? 0));
    }
    const wide = await load(me(a), { authorization: `Bearer ${sa.token}` }, 50);

    // Login against calling the gateway directly, interleaved pair by pair.
    const direct: number[] = [];
    const logins: number[] = [];
    const floor: number[] = []; // an empty login body: the framework's own cost, no site, no store
    const empty = () =>
      fetch(`${a.url}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }).then((r) => r.json());
    const site = `${gateway.url}/api/user/self`;
    for (let i = 0; i < LOGIN_SAMPLES; i++) {
      direct.push(
        await timed(() =>
          fetch(site, { headers: { authorization: ALICE.token, "new-api-user": String(ALICE.id) } }).then((r) =>
            r.json(),
          ),
        ),
      );
      logins.push(await timed(() => signIn(a, siteIds[0] ?? 1)));
      floor.push(await timed(empty));
    }

    const rps = (k: keyof typeof rounds) => median(rounds[k].map((x) => x.rps));
    const non2xx = [
      ...rounds.bearer,
      ...rounds.cookie,
      ...rounds.few,
      ...rounds.many,
      ...rounds.summary,
      ...rounds.logs,
      wide,
    ].reduce((n, x) => n + x.non2xx + x.errors, 0);
    const none401 = rounds.none.every((x) => x.non2xx > 0);
    const figures = {
      bearerVsNone: rps("bearer") / rps("none"),
      cookieVsBearer: rps("cookie") / rps("bearer"),
      manyVsFew: median(pairs),
      /** Each round's ratio, in order. */
      manyVsFewRounds: pairs,
      summaryCost: rps("bearer") / rps("summary"),
      logsCost: rps("bearer") / rps("logs"),
      loginOverhead: median(logins) - median(direct),
      floorOverhead: median(floor) - median(direct),
      p99: wide.p99,
      non2xx,
      rss: Math.max(rssMb(a.pid), rssMb(b.pid), rssMb(c.pid)),
    };
    return {
      kind,
      figures,
      rps: {
        none: rps("none"),
        bearer: rps("bearer"),
        cookie: rps("cookie"),
        few: rps("few"),
        many: rps("many"),
        summary: rps("summary"),
        logs: rps("logs"),
        wide: wide.rps,
      },
      login: { login: median(logins), direct: median(direct), floor: median(floor) },
      none401,
    };
  } finally {
    await Promise.all(apps.map((x) => x.stop()));
    await Promise.all([gateway.close(), family.gateway.close()]);
    for (const s of stores) await s.cleanup();
  }
}
