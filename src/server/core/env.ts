import { z } from "zod";
import { parseProxyEntry } from "../net/client-address";

const intFrom = (fallback: number, min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, "必须是非负整数")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .default(fallback);

/** A switch: 1 or true on, 0 or false off. */
const flag = (byDefault: "0" | "1") =>
  z
    .enum(["0", "1", "true", "false"])
    .default(byDefault)
    .transform((v) => v === "1" || v === "true");

/** Comma-separated addresses or CIDR ranges, e.g. `127.0.0.1,10.0.0.0/8,fd00::/8`. */
const proxyList = z
  .string()
  .default("")
  .transform((raw, ctx) => {
    const entries = raw
      .split(",")
      .map((e) => e.trim())
      .filter(Boolean);
    for (const entry of entries) {
      if (!parseProxyEntry(entry)) {
        ctx.addIssue({
          code: "custom",
          message: `"${entry}" 不是 IP 地址或网段；请列出受信任的反向代理，例如 127.0.0.1,10.0.0.0/8`,
        });
      }
    }
    return entries;
  });

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^(file:|postgres(ql)?:\/\/)/, "必须以 file: 或 postgresql:// 开头")
    .default("file:./data/dashboard.db"),
  DATA_DIR: z.string().trim().min(1).default("./data"),
  SESSION_PASSWORD: z.string().optional(),
  /** Keys of the vault that seals saved access tokens; unset: derived from SESSION_PASSWORD. */
  VAULT_KEY: z.string().optional(),
  SITE_TIMEOUT_MS: intFrom(10_000, 1, 600_000),
  LOGIN_RATE_LIMIT: intFrom(20, 0, 1_000_000),
  /** The operator's own sign-in limit per address and minute: never off. */
  ADMIN_LOGIN_RATE_LIMIT: intFrom(5, 1, 1000),
  SITE_REQUESTS_PER_MINUTE: intFrom(60, 1, 100_000),
  ACCOUNT_READS_PER_MINUTE: intFrom(120, 1, 100_000),
  LEDGER_BACKFILL_DAYS: intFrom(30, 1, 180),
  LEDGER_SYNC_MINUTES: intFrom(10, 0, 1440),
  LEDGER_KEEP_DAYS: intFrom(400, 1, 36_500),
  /** How often the job runner looks for due work (seconds). */
  JOB_TICK_SECONDS: intFrom(60, 1, 3600),
  /** How long a job's lease lasts unrenewed: a dead holder's job is taken over after this. */
  JOB_LEASE_SECONDS: intFrom(30, 3, 3600),
  TRUST_PROXY: proxyList,
  /** The bearer token GET /api/metrics asks for; unset: the metrics are not served. */
  METRICS_TOKEN: z.string().trim().min(16, "至少 16 个字符").optional(),
  /**
   * Redis (redis://host:6379/0): the sites' budgets shared by every instance there; unset: in
   * PostgreSQL when it is the store, in this process on SQLite (one process).
   */
  REDIS_URL: z
    .string()
    .trim()
    .regex(/^rediss?:\/\//, "必须以 redis:// 或 rediss:// 开头")
    .optional(),
  DB_POOL_SIZE: intFrom(10, 1, 1000),
  /**
   * PostgreSQL: the connections of the background jobs, a pool of their own beside DB_POOL_SIZE,
   * so a live request never waits behind a sync's commit.
   */
  DB_BACKGROUND_POOL_SIZE: intFrom(4, 1, 1000),
  DB_TIMEOUT_MS: intFrom(5_000, 100, 600_000),
  /**
   * Background work waits its turn while any instance of the deployment answers people (they
   * share the store and often the machine); 0: only while this one does (an instance on a machine
   * of its own that serves nobody, whose syncs need not slow down for the others' readers).
   */
  YIELD_TO_OTHER_INSTANCES: flag("1"),
  /**
   * For this long after people start being served (a page and the ones a person opens after it),
   * background work takes no step at all; past it, a steady load, it takes a fifth of its process.
   */
  LIVE_FIRST_SECONDS: intFrom(10, 0, 600),
  LOG_LEVEL: z.enum(["silent", "error", "info"]).default("info"),
  /** Alert channels may be on loopback, private or link-local addresses (a self-hosted ntfy). */
  ALERT_ALLOW_PRIVATE: flag("0"),
  /** How many sites a workspace may add itself (its own sites, beside the registered ones); 0 turns that off. */
  WORKSPACE_SITES: intFrom(10, 0, 1000),
  /** Sites a workspace adds may be on loopback, private or link-local addresses (a gateway on the same network). */
  WORKSPACE_SITES_ALLOW_PRIVATE: flag("0"),
  /** How long one alert delivery may take (ms). */
  ALERT_TIMEOUT_MS: intFrom(5_000, 500, 60_000),
  /** The mail server of email alerts (smtp://user:pass@host:587, smtps://…); unset: no email channels. */
  SMTP_URL: z.string().url().optional(),
  SMTP_FROM: z.string().min(3).default("网关控制台 <alerts@localhost>"),
  /** The dashboard's public address (https://dash.example.com): digests' links point there; unset: the address the digest was set up at. */
  PUBLIC_URL: z
    .string()
    .url()
    .transform((u) => u.replace(/\/+$/, ""))
    .optional(),
  /** The base addresses of Telegram's bot API and the group robots (a proxy or a test stand-in may stand in). */
  TELEGRAM_API_URL: z.string().url().default("https://api.telegram.org"),
  WECOM_API_URL: z.string().url().default("https://qyapi.weixin.qq.com"),
  DINGTALK_API_URL: z.string().url().default("https://oapi.dingtalk.com"),
  FEISHU_API_URL: z.string().url().default("https://open.feishu.cn"),
});

export type Env = z.infer<typeof envSchema>;

export class EnvError extends Error {}

/** Parses the environment; throws an EnvError naming every bad variable. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  // An empty variable means "not set", as in most shells' `VAR= cmd`.
  const present = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
  throw new EnvError(`环境变量无效:\n${lines.join("\n")}`);
}

let cached: Env | undefined;

/** The validated environment, parsed once on first use (never at import, so builds need none). */
export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}
