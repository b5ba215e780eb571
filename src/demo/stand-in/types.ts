/** The stand-in's data and options: a user's log, tokens and top-ups, and how the site behaves. */
import type { IncomingMessage, Server, ServerResponse } from "node:http";

export type StandInFamily = "new-api" | "new-api-legacy" | "veloera" | "one-api" | "one-hub" | "done-hub";

/** One usage-log row; `type` is the family's own number (1 top-up, 2 consume, …). */
export type StandInLog = {
  createdAt: number;
  type: number;
  model: string;
  tokenName: string;
  tokenId: number;
  quota: number;
  promptTokens: number;
  completionTokens: number;
  durationMs: number;
  stream: boolean;
  content: string;
  group?: string;
  /**
   * The model, completion and group ratios the site priced the call with (new-api's `other`,
   * one-hub's `metadata`; the group's 1 when not given).
   */
  ratios?: { model: number; completion: number; group?: number };
  /**
   * The call's prompt tokens read from the cache and written to it (both inside promptTokens),
   * with their ratios: new-api logs `cache_tokens`/`cache_creation_tokens` in `other`, one-hub
   * `cached_tokens` (OpenAI) or `cached_read_tokens`/`cached_write_tokens` (Claude) in `metadata`.
   */
  cache?: { read: number; readRatio: number; write: number; writeRatio: number; claude: boolean };
  /** new-api: the subscription that paid the call (`billing_source` subscription, with its figures). */
  subscription?: { id: number; planId: number; title: string; total: number; used: number };
};

/** One of the site's plans (new-api's subscription plans), in quota units. */
export type StandInPlan = {
  id: number;
  title: string;
  price: number;
  /** Quota per window; 0 = unlimited. */
  total: number;
  resetPeriod: "never" | "daily" | "weekly" | "monthly" | "custom";
  resetSeconds?: number;
  overflow?: boolean;
  enabled?: boolean;
};

/** A user's subscription (new-api's UserSubscription), times in Unix seconds. */
export type StandInSubscription = {
  id: number;
  planId: number;
  total: number;
  used: number;
  start: number;
  end: number;
  status?: "active" | "expired" | "cancelled";
  source?: "order" | "balance" | "admin";
  nextReset?: number;
  lastReset?: number;
  overflow?: boolean;
};

export type StandInToken = {
  id: number;
  name: string;
  /** The full key as stored (48 characters for new-api, one-api and Veloera). */
  key: string;
  status: 1 | 2 | 3 | 4;
  createdTime: number;
  accessedTime: number;
  /** -1: never. */
  expiredTime: number;
  remainQuota: number;
  unlimited: boolean;
  usedQuota: number;
  group: string;
  /** Models and addresses the key is limited to (empty: any). */
  limits?: { models: string[]; ips: string[] };
  crossGroupRetry?: boolean;
  backupGroup?: string;
  /** Soft-deleted (every family but one-api): gone from the lists, kept in the table. */
  deleted?: boolean;
};

export type StandInTopup = {
  id: number;
  amount: number;
  money: number;
  tradeNo: string;
  paymentMethod: string;
  createTime: number;
  completeTime: number;
  status: "pending" | "success" | "failed" | "expired";
};

export type GatewayUser = {
  accessToken: string;
  data: Record<string, unknown>;
  logs?: StandInLog[];
  tokens?: StandInToken[];
  topups?: StandInTopup[];
  /** The models the account may use (its usable-models route). */
  models?: string[];
  /** new-api: the account's subscriptions and billing preference. */
  subscriptions?: StandInSubscription[];
  billingPreference?: string;
};

/** A redemption code of the stand-in site: 1 enabled, 2 disabled, 3 used; `expiresAt` 0 = never. */
export type StandInCode = { key: string; quota: number; status: 1 | 2 | 3; expiresAt?: number; id?: number };

export type GatewayOptions = {
  users: GatewayUser[];
  /** The price list in the family's own shape (`/api/pricing` or `/api/prices` items) and the group ratios. */
  pricing?: { data: Array<Record<string, unknown>>; groupRatios?: Record<string, number> };
  /** Which gateway to be; new-api when `requireUserHeader`, else one-api (the sign-in stand-ins). */
  family?: StandInFamily;
  /** Refuse tokens without a matching user-id header (new-api from 2024-07, Veloera). */
  requireUserHeader?: boolean;
  /** HTTP status of failure answers: 200 like older builds, 401 like current new-api. */
  failureStatus?: 200 | 401;
  /** Extra or replaced `/api/status` fields (money settings, version). */
  status?: Record<string, unknown>;
  /** The global API limit: at most `max` requests per `windowMs` per client, then 429 with an empty body. */
  rateLimit?: { max: number; windowMs: number };
  /** Delay before every answer, as a distant site has. */
  latencyMs?: number;
  /** The site's redemption codes (spent as they are redeemed). */
  codes?: StandInCode[];
  /** new-api: whether its administrator confirmed the payment compliance terms (redeeming is closed until then); default true. */
  compliance?: boolean;
  /** new-api: the subscription plans it sells (`GET /api/subscription/plans`). */
  plans?: StandInPlan[];
  /** The check-in reward in quota (new-api's min = max, Veloera's CheckInQuota); default 5000. */
  checkinReward?: number;
  /** new-api's critical budget (redeems and key reveals) per client, default 20 per 20 minutes. */
  criticalLimit?: { max: number; windowMs: number };
  /** Lets a test take over a request before the contract answers it; return true when handled. */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
  host?: string;
  port?: number;
};

export type RunningGateway = {
  url: string;
  server: Server;
  family: StandInFamily;
  /** Requests seen, newest last (method, path, query, headers, arrival in ms since the epoch). */
  requests: { method: string; path: string; query: string; headers: IncomingMessage["headers"]; at: number }[];
  /** Requests answered 429. */
  throttled: () => number;
  /** Most requests in flight at once so far. */
  peakInFlight: () => number;
  /** Requests in flight now (arrived, not yet answered). */
  inFlight: () => number;
  close: () => Promise<void>;
};
