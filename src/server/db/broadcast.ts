/**
 * The instances' word to each other (core/broadcast.ts): PostgreSQL's LISTEN/NOTIFY on a
 * connection of its own (the pool's connections come and go), or Redis' pub/sub when REDIS_URL
 * is set. Each message carries its sender, so an instance drops its own. A line that breaks is
 * opened again by itself (every 1 s to 10 s); the listener is told it resumed.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import type { Broadcast, BroadcastHandlers } from "../core/broadcast";
import { logEvent } from "../core/log";

const CHANNEL = "gd_cache";
/** NOTIFY's payload is at most 8000 bytes; the messages are short keys. */
const MAX_MESSAGE = 4_000;

/** A cache message, or the word that the sender answers live requests. */
type Envelope = { from: string; message?: string; live?: true };

function receiver(self: string, handlers: BroadcastHandlers) {
  return (payload: string | undefined) => {
    try {
      const e = JSON.parse(payload ?? "") as Envelope;
      if (e.from === self) return;
      if (e.live === true) handlers.live();
      else if (typeof e.message === "string") handlers.message(e.message);
    } catch {
      // Not one of ours.
    }
  };
}

/** LISTEN on a connection of its own; NOTIFY through the pool. */
export async function postgresBroadcast(url: string, pool: pg.Pool, handlers: BroadcastHandlers): Promise<Broadcast> {
  const self = randomUUID();
  const receive = receiver(self, handlers);
  let client: pg.Client | null = null;
  let closed = false;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;
  const listen = async (): Promise<void> => {
    timer = null;
    if (closed) return;
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    // A broken line is taken up again below; its error is not news.
    c.on("error", () => undefined);
    c.on("notification", (n) => receive(n.payload));
    c.on("end", () => {
      if (client !== c || closed) return;
      client = null;
      logEvent("broadcast.lost", { store: "postgres" });
      retry();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch {
      await c.end().catch(() => undefined);
      retry();
      return;
    }
    if (closed) return void (await c.end().catch(() => undefined));
    const resumed = failures > 0;
    failures = 0;
    client = c;
    if (resumed) {
      logEvent("broadcast.resumed", { store: "postgres" });
      handlers.resumed();
    }
  };
  const retry = () => {
    failures++;
    if (!closed && !timer) {
      timer = setTimeout(() => void listen(), Math.min(1_000 * failures, 10_000));
      timer.unref();
    }
  };
  await listen();
  return {
    kind: "postgres",
    async publish(message) {
      if (message.length > MAX_MESSAGE) return;
      await pool.query("SELECT pg_notify($1, $2)", [CHANNEL, JSON.stringify({ from: self, message })]);
    },
    async sayLive() {
      await pool.query("SELECT pg_notify($1, $2)", [CHANNEL, JSON.stringify({ from: self, live: true })]);
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}

/** Pub/sub in Redis: a subscriber connection and a publisher (the client reconnects by itself). */
export async function redisBroadcast(url: string, handlers: BroadcastHandlers): Promise<Broadcast> {
  const self = randomUUID();
  const receive = receiver(self, handlers);
  const options = {
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: (times: number) => Math.min(times * 200, 2_000),
  };
  const subscriber = new Redis(url, { ...options, enableOfflineQueue: true });
  const publisher = new Redis(url, { ...options, commandTimeout: 1_000 });
  subscriber.on("error", () => undefined);
  publisher.on("error", () => undefined);
  subscriber.on("message", (_channel: string, payload: string) => receive(payload));
  let ready = false;
  subscriber.on("ready", () => {
    // Every ready after the first follows a lost line: ioredis subscribes again by itself.
    if (ready) {
      logEvent("broadcast.resumed", { store: "redis" });
      handlers.resumed();
    }
    ready = true;
  });
  await Promise.race([
    subscriber.subscribe(`gd:${CHANNEL}`).catch(() => undefined),
    new Promise((resolve) => setTimeout(resolve, 2_000).unref()),
  ]);
  return {
    kind: "redis",
    async publish(message) {
      if (message.length > MAX_MESSAGE) return;
      await publisher.publish(`gd:${CHANNEL}`, JSON.stringify({ from: self, message }));
    },
    async sayLive() {
      await publisher.publish(`gd:${CHANNEL}`, JSON.stringify({ from: self, live: true }));
    },
    close() {
      subscriber.disconnect();
      publisher.disconnect();
      return Promise.resolve();
    },
  };
}
