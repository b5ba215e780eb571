/**
 * What an operator watches (docs/design.md 23), in Prometheus' text format at GET /api/metrics: one
 * registry per process, kept on globalThis so that every bundle of the server (the entry that
 * counts requests, the route handlers, the jobs) adds to the same one. No label ever holds a
 * token, a user id or a query string: routes are their patterns, sites their hosts.
 */
import client from "prom-client";

type Metrics = {
  registry: client.Registry;
  httpRequests: client.Counter<"route" | "method" | "status">;
  httpSeconds: client.Histogram<"route">;
  siteCalls: client.Counter<"site" | "outcome">;
  siteSeconds: client.Histogram<"site">;
  budgetWaitSeconds: client.Histogram<"site" | "kind">;
  sitePauses: client.Counter<"site">;
  jobRuns: client.Counter<"job" | "outcome">;
  jobSeconds: client.Histogram<"job">;
  jobLag: client.Gauge<"job">;
  ledgerEntries: client.Counter;
  sessions: client.Gauge;
  savedAccounts: client.Gauge;
  poolConnections: client.Gauge<"pool" | "state">;
  poolWaiting: client.Gauge<"pool">;
  /** The process's PostgreSQL pools by name (`requests`, `background`): their counts are read at each scrape. */
  pools: Map<string, PoolCounts>;
  /** When each job last finished a run without failing (ms): its lag is read at each scrape. */
  lastGoodRun: Map<string, number>;
  /** The sites with series of their own (siteLabel). */
  siteLabels: Set<string>;
};

/** What a connection pool says of itself (pg.Pool's counts). */
type PoolCounts = { totalCount: number; idleCount: number; waitingCount: number };

/**
 * Sites with series of their own in a process: past them, a site's calls are counted under
 * `other`, so the metrics of a deployment of 10,000 sites stay the size of a small one's.
 */
const SITE_LABELS_MAX = 200;

function create(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: "gd_" });
  const lastGoodRun = new Map<string, number>();
  const pools = new Map<string, PoolCounts>();
  const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
  return {
    registry,
    lastGoodRun,
    pools,
    siteLabels: new Set(),
    httpRequests: new client.Counter({
      name: "gd_http_requests_total",
      help: "HTTP requests answered, by route pattern, method and status",
      labelNames: ["route", "method", "status"],
      registers: [registry],
    }),
    httpSeconds: new client.Histogram({
      name: "gd_http_request_duration_seconds",
      help: "Time to answer a request, by route pattern",
      labelNames: ["route"],
      buckets: seconds,
      registers: [registry],
    }),
    siteCalls: new client.Counter({
      name: "gd_site_calls_total",
      help: "Calls to gateway sites, by site host and outcome (the HTTP status class, or why it failed)",
      labelNames: ["site", "outcome"],
      registers: [registry],
    }),
    siteSeconds: new client.Histogram({
      name: "gd_site_call_duration_seconds",
      help: "Time a site took to answer, by site host",
      labelNames: ["site"],
      buckets: seconds,
      registers: [registry],
    }),
    budgetWaitSeconds: new client.Histogram({
      name: "gd_site_budget_wait_seconds",
      help: "Time a call waited for its turn in the site's budget, by site id and kind (signin, live, background)",
      labelNames: ["site", "kind"],
      buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 15, 30, 60],
      registers: [registry],
    }),
    sitePauses: new client.Counter({
      name: "gd_site_pauses_total",
      help: "Times a site answered 429 and was left alone for its Retry-After, by site id",
      labelNames: ["site"],
      registers: [registry],
    }),
    jobRuns: new client.Counter({
      name: "gd_job_runs_total",
      help: "Runs of background jobs in this instance, by job and outcome (ok, failed)",
      labelNames: ["job", "outcome"],
      registers: [registry],
    }),
    jobSeconds: new client.Histogram({
      name: "gd_job_run_duration_seconds",
      help: "Time a background job's run took, by job",
      labelNames: ["job"],
      buckets: [0.01, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
    jobLag: new client.Gauge({
      name: "gd_job_lag_seconds",
      help: "Seconds since each background job last finished a run without failing, in this instance",
      labelNames: ["job"],
      registers: [registry],
      collect() {
        const now = Date.now();
        for (const [job, at] of lastGoodRun) this.set({ job }, (now - at) / 1000);
      },
    }),
    ledgerEntries: new client.Counter({
      name: "gd_ledger_entries_ingested_total",
      help: "Usage-log entries copied from the sites into the ledger by this instance",
      registers: [registry],
    }),
    sessions: new client.Gauge({
      name: "gd_sessions",
      help: "Live sign-in sessions of the deployment (read from the store at each scrape)",
      registers: [registry],
    }),
    savedAccounts: new client.Gauge({
      name: "gd_saved_accounts",
      help: "Accounts saved in workspaces, of the deployment (read from the store at each scrape)",
      registers: [registry],
    }),
    poolConnections: new client.Gauge({
      name: "gd_db_pool_connections",
      help: "PostgreSQL connections of this process, by pool (requests, background) and state (in_use, idle)",
      labelNames: ["pool", "state"],
      registers: [registry],
      collect() {
        for (const [pool, p] of pools) {
          this.set({ pool, state: "in_use" }, p.totalCount - p.idleCount);
          this.set({ pool, state: "idle" }, p.idleCount);
        }
      },
    }),
    poolWaiting: new client.Gauge({
      name: "gd_db_pool_waiting",
      help: "Queries of this process waiting for a PostgreSQL connection, by pool (a pool too small for its work)",
      labelNames: ["pool"],
      registers: [registry],
      collect() {
        for (const [pool, p] of pools) this.set({ pool }, p.waitingCount);
      },
    }),
  };
}

const holder = globalThis as unknown as { gdMetrics?: Metrics };

export function metrics(): Metrics {
  holder.gdMetrics ??= create();
  return holder.gdMetrics;
}

/** The app's route patterns (`/api/workspace/accounts/[id]`), as the build lists them; set at start. */
let ROUTES: Array<{ pattern: string; parts: string[] }> = [];

export function setRoutePatterns(patterns: string[]): void {
  ROUTES = [...new Set(patterns)]
    .map((pattern) => ({ pattern, parts: pattern.split("/").filter(Boolean) }))
    // The most specific first: `/api/site/token` before `/api/site/[...path]`, which comes before
    // `/api/[...route]`; a rest-of-path pattern after every other.
    .sort((a, b) => restOf(a.parts) - restOf(b.parts) || literals(b.parts) - literals(a.parts));
}

const restOf = (parts: string[]) => (parts.some((p) => p.startsWith("[...") || p.startsWith("[[...")) ? 1 : 0);
const literals = (parts: string[]) => parts.filter((p) => !p.startsWith("[")).length;

function matches(parts: string[], path: string[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (part.startsWith("[[...")) return true;
    if (part.startsWith("[...")) return path.length > i;
    if (i >= path.length) return false;
    if (!part.startsWith("[") && part !== path[i]) return false;
  }
  return parts.length === path.length;
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** A request method as a label: one of HTTP's own, or `other`. */
export const methodOf = (method: string | undefined): string => (method && METHODS.has(method) ? method : "other");

/**
 * A request path as a label from a fixed set: the app route it reaches (its pattern), `/_next` for
 * the framework's files, or `other`. Nothing a client puts in a path ever becomes a label of its own.
 */
export function routeOf(path: string): string {
  const bare = path.split("?")[0] ?? "";
  if (bare.startsWith("/_next/")) return "/_next";
  const segments = bare.split("/").filter(Boolean);
  if (segments.length > 12) return "other";
  return ROUTES.find((r) => matches(r.parts, segments))?.pattern ?? "other";
}

/** A run of a background job, timed and counted. */
export function countJobRun(job: string, started: number, ok: boolean): void {
  const m = metrics();
  m.jobRuns.inc({ job, outcome: ok ? "ok" : "failed" });
  m.jobSeconds.observe({ job }, (Date.now() - started) / 1000);
  if (ok) m.lastGoodRun.set(job, Date.now());
}

/** A pool of the process, watched from now on (gd_db_pool_connections, gd_db_pool_waiting). */
export function watchPool(name: string, pool: PoolCounts): void {
  metrics().pools.set(name, pool);
}

/** The `site` label of a site's series: its own for the first SITE_LABELS_MAX sites seen, then `other`. */
export function siteLabel(site: string): string {
  const { siteLabels } = metrics();
  if (siteLabels.has(site)) return site;
  if (siteLabels.size >= SITE_LABELS_MAX) return "other";
  siteLabels.add(site);
  return site;
}
