/**
 * Where the sites' shared budget is kept (core/shared-budget.ts, docs/design.md 23): in Redis when
 * REDIS_URL is set (sorted sets of the window's calls and of those in flight, taken by one Lua
 * script), else in PostgreSQL when it is the store (site_budget_claim(), one statement under an
 * advisory lock). Both count a sliding window by their own clock, so instances on different
 * machines agree. A store that cannot answer makes `take` throw: the gate falls back then.
 *
 * rate-limiter-flexible was the first choice; its limiters count fixed windows, which let twice
 * the budget through across a window's edge, where the sites count a sliding one.
 */
import { Redis } from "ioredis";
import type { SharedBudget, SharedTake } from "../core/shared-budget";
import { driverOf, type Db } from "./driver";

const answerOf = (n: number, used: number): SharedTake =>
  n === 0 ? { kind: "taken", used } : n < 0 ? { kind: "paused", ms: -n } : { kind: "wait", ms: n, used };

/** The budget in PostgreSQL: the function of migration 20261207000000_site_budget. */
export function postgresBudget(db: Db): SharedBudget {
  const driver = driverOf(db);
  if (driver.kind !== "postgres") throw new Error("postgresBudget needs a PostgreSQL store");
  const pool = driver.pool;
  return {
    kind: "postgres",
    async take(siteId, token, o) {
      const { rows } = await pool.query<{ answer: string; used: number }>(
        "SELECT answer, used FROM site_budget_claim($1, $2, $3, $4, $5, $6, $7)",
        [siteId, o.limit, o.background, o.windowMs, o.maxInFlight, token, o.busyMs],
      );
      return answerOf(Number(rows[0]?.answer ?? 50), Number(rows[0]?.used ?? 0));
    },
    async restore(siteId, calls, windowMs) {
      if (calls.length === 0) return;
      await pool.query(
        `INSERT INTO site_budget_slots (site_id, at, background, token)
         SELECT $1, now_ms - c.age, c.background, c.token
           FROM (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT AS now_ms) n,
                unnest($2::TEXT[], $3::BIGINT[], $4::BOOLEAN[]) AS c(token, age, background)
          WHERE c.age < $5
         ON CONFLICT (token) DO NOTHING`,
        [
          siteId,
          calls.map((c) => c.token),
          calls.map((c) => Math.round(c.ageMs)),
          calls.map((c) => c.background),
          windowMs,
        ],
      );
    },
    async done(siteId, token) {
      await pool.query("UPDATE site_budget_slots SET busy_until = NULL WHERE site_id = $1 AND token = $2", [
        siteId,
        token,
      ]);
    },
    async pause(siteId, ms) {
      await pool.query(
        `INSERT INTO site_budget_pauses (site_id, until)
           VALUES ($1, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT + $2)
         ON CONFLICT (site_id) DO UPDATE SET until = greatest(site_budget_pauses.until, EXCLUDED.until)`,
        [siteId, ms],
      );
    },
    // Every instance reads and writes the one database: none is ever cut off from the budget alone.
    beat: () => Promise.resolve(1),
    close: () => Promise.resolve(),
  };
}

/** Takes a slot atomically: KEYS the window's calls, those in flight, the pause; by Redis' clock. */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, window, most, busy = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local used = redis.call('ZCARD', KEYS[1])
local paused = tonumber(redis.call('GET', KEYS[3]) or '0')
if paused > now then return {-(paused - now), used} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= most then return {50, used} end
if used >= limit then
  local at = redis.call('ZREVRANGE', KEYS[1], limit - 1, limit - 1, 'WITHSCORES')
  return {math.max(1, tonumber(at[2]) + window - now), used}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('ZADD', KEYS[2], now + busy, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window + 1000)
redis.call('PEXPIRE', KEYS[2], busy + 1000)
return {0, used + 1}`;

/** Puts calls back into the window by their age (ARGV: window, then token and age pairs), each once. */
const RESTORE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  local age = tonumber(ARGV[i + 1])
  if age < window then redis.call('ZADD', KEYS[1], 'NX', now - age, ARGV[i]) end
end
redis.call('PEXPIRE', KEYS[1], window + 1000)
return 0`;

const PAUSE = `
local t = redis.call('TIME')
local until_ = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
if until_ > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], until_, 'PX', tonumber(ARGV[1]) + 1000)
end
return 0`;

const BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
redis.call('PEXPIRE', KEYS[1], 120000)
return redis.call('ZCARD', KEYS[1])`;

/** A site's keys, in one hash slot (a Redis cluster keeps them together). */
const keys = (siteId: number) => [`budget:{${siteId}}:calls`, `budget:{${siteId}}:busy`, `budget:{${siteId}}:pause`];

/**
 * The budget in Redis, once connected (or after 2 s without: the gate starts on its share then).
 * Commands fail at once while the connection is down (no queue), and after a second when Redis
 * does not answer: the gate then falls back to its share until Redis is back (the client
 * reconnects by itself).
 */
export async function redisBudget(url: string): Promise<SharedBudget> {
  const redis = new Redis(url, {
    keyPrefix: "gd:",
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  // Refusals are answered by the failing commands; the client's own error events are not news.
  redis.on("error", () => undefined);
  // A connection made again may find a server that restarted empty: no take until the gate has
  // given back this instance's calls of the window (gateway/window.ts).
  let connected = false;
  let again = false;
  redis.on("ready", () => {
    if (connected) again = true;
    connected = true;
  });
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 2_000);
    redis.once("ready", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return {
    kind: "redis",
    async take(siteId, token, o) {
      if (again) throw new Error("Redis 重新连接后尚未交回本实例的调用");
      // The script answers {answer, the window's count}.
      const [n, used] = (await redis.eval(
        TAKE,
        3,
        ...keys(siteId),
        o.limit,
        o.windowMs,
        o.maxInFlight,
        token,
        o.busyMs,
      )) as [number, number];
      return answerOf(Number(n), Number(used));
    },
    async restore(siteId, calls, windowMs) {
      if (calls.length === 0) return;
      const pairs = calls.flatMap((c) => [c.token, Math.round(c.ageMs)]);
      await redis.eval(RESTORE, 1, keys(siteId)[0] as string, windowMs, ...pairs);
    },
    async done(siteId, token) {
      await redis.zrem(keys(siteId)[1] as string, token);
    },
    async pause(siteId, ms) {
      await redis.eval(PAUSE, 1, keys(siteId)[2] as string, Math.round(ms));
    },
    reconnected() {
      const was = again;
      again = false;
      return was;
    },
    async beat(instance) {
      return Number(await redis.eval(BEAT, 1, "instances", instance));
    },
    close() {
      redis.disconnect();
      return Promise.resolve();
    },
  };
}
