/**
 * One authenticated call to an account's own site with its sealed access token (docs/design.md 12):
 * the reads of site-data and the writes of actions/ alike go through the site's gate (budget,
 * in-flight limit, 429 pause) and the account's share of it, and fail with a SiteDataError whose
 * message is the answer.
 */
import { Refusal, brand } from "../core/errors";
import { env } from "../core/env";
import { BUSY, MSG } from "../core/messages";
import type { Db } from "../db/client";
import { GatewayError, callSite, parseAnswer, type SiteCall } from "../gateway/client";
import type { WriteAnswer, WriteRequest } from "../gateway/writes";
import { SiteBusy, pauseSite, throughGate } from "../gateway/gate";
import { isRow, type SiteRequest } from "../gateway/reads";
import { withoutCredentials } from "../gateway/credentials";
import { freshProfile } from "../sites/probe";
import type { ProfiledSite } from "../sites/registry";
import { credentialOf, possession } from "../session/possession";
import { sessionStore } from "../session/store";
import { logEvent } from "../core/log";
import { processState, type StatePart } from "../core/process-state";
import { accountShare, cached, callsThisMinute, chargeAccount, forget, othersWant } from "./live-state";

/** Why a site's data could not be read, as the overview shows it. */
export type FailureKind = "refused" | "unreachable" | "busy" | "removed";

/** A failure of the operation: its message is the answer (`{success:false,message}`). */
const SITE_DATA_ERROR = brand("SiteDataError");

export class SiteDataError extends Refusal {
  /** Also one made by another copy of this module: reads are shared through the process state. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return SITE_DATA_ERROR.is(value);
  }

  constructor(
    message: string,
    readonly kind: FailureKind = "unreachable",
  ) {
    super(message);
    SITE_DATA_ERROR.mark(this);
  }
}

const UNEXPECTED = "站点返回的数据无法识别";

/** The site answered, but not in any shape its family uses. */
export const unexpected = () => new SiteDataError(`${MSG.siteFailedPrefix}${UNEXPECTED}`);

/** The signed-in account: its session, site and the user id as sent at sign-in. */
export type Account = {
  sessionId: string;
  siteId: number;
  /** The site's address at sign-in: the token goes there only, and cached answers are the ones read there. */
  siteUrl: string;
  siteUserId: number;
  userId: number | string;
};

export type SiteDataDeps = {
  db: Db;
  timeoutMs: number;
  perMinute: number;
  /** Longest wait for a budget slot before answering 站点繁忙 (default: one minute, i.e. always wait). */
  maxWaitMs?: number;
  acceptLanguage?: string | null;
  /** Skip the cache (the refresh button); the site's budget still applies. */
  refresh?: boolean;
  /** Work nobody waits for (the ledger's sync): live views go first (gate.ts). */
  background?: boolean;
  /**
   * Background work's turn beside live requests (core/live-load.ts), taken after each answer and
   * before it is taken in (parsed, stored): a call whose budget slot came while people are served
   * leaves its work for after them.
   */
  turn?: () => Promise<void>;
  /** Live calls one account may send its site per minute (default ACCOUNT_READS_PER_MINUTE). */
  accountPerMinute?: number;
};

/** Messages of gateway-user-api.md that mean the token or the user is refused, in every family and language. */
const REFUSAL =
  /access token|令牌|未登录|封禁|banned|Unauthorized|无权进行此操作|会话无效|用户校验失败|New-Api-User|Veloera-User/i;

function redact(message: string, accessToken: string): string {
  return accessToken.length >= 8 ? message.split(accessToken).join("***") : message;
}

const accountKey = (account: Account) => `${account.siteId}:${account.siteUserId}`;

/** One operation's reads: the account, its site, and its access token, unsealed once for them all. */
export type Ctx = { account: Account; site: ProfiledSite; deps: SiteDataDeps; token: () => Promise<string | null> };

export function contextOf(account: Account, site: ProfiledSite, deps: SiteDataDeps): Ctx {
  let opened: Promise<string | null> | undefined;
  return {
    account,
    site,
    deps,
    token: () => (opened ??= sessionStore(deps.db).accessTokenOf(account.sessionId, site.url)),
  };
}

export async function openSite(account: Account, deps: SiteDataDeps): Promise<ProfiledSite> {
  const site = await freshProfile(deps.db, account.siteId, deps);
  if (!site) throw new SiteDataError(MSG.siteRemoved, "removed");
  return site;
}

/**
 * One authenticated call inside the site's budget and the account's share; the site's envelope
 * (or null for a 404 when `missingOk`, a route this build of the family lacks). Transport
 * failures, throttling and a refused token are SiteDataErrors.
 */
async function exchange(
  ctx: Ctx,
  request: SiteRequest & Pick<SiteCall, "method" | "body">,
  { missingOk = false } = {},
): Promise<Record<string, unknown> | null> {
  const { account, site, deps } = ctx;
  const accessToken = await ctx.token();
  if (accessToken === null) throw new SiteDataError(MSG.unauthenticated);
  const perMinute = site.requestsPerMinute ?? deps.perMinute;
  const share = accountShare(perMinute, deps.accountPerMinute ?? env().ACCOUNT_READS_PER_MINUTE);
  const live = !deps.background;
  // Its share limits an account while others want the site's budget; alone, it may use all of it.
  if (live && callsThisMinute(accountKey(account)).count >= share && othersWant(site.id, accountKey(account))) {
    throw new SiteDataError(BUSY.account(), "busy");
  }
  // Counted now (calls under way count too), given back if the gate never sends it.
  if (live) chargeAccount(accountKey(account), 1);
  let sent = false;
  const call: SiteCall = {
    siteUrl: site.url,
    path: request.path,
    query: request.query,
    method: request.method,
    body: request.body,
    accessToken,
    userId: account.userId,
    acceptLanguage: deps.acceptLanguage,
    timeoutMs: deps.timeoutMs,
  };
  let data: unknown;
  try {
    // The operator may have set this site's own budget (docs/design.md 15).
    // Work that takes its turns beside live requests is not let go while they begin either.
    const budget = { ...deps, perMinute, account: accountKey(account), yields: deps.turn !== undefined };
    const answer = await throughGate(site.id, budget, () => {
      sent = true;
      return callSite(call);
    });
    await deps.turn?.();
    if (answer.status === 429) throw new SiteDataError(BUSY.site(pauseSite(site.id, answer.retryAfter)), "busy");
    if (answer.status === 404 && missingOk) return null;
    if (answer.status === 401) throw await refusal(ctx, request);
    data = parseAnswer(answer);
  } catch (error) {
    if (live && !sent) chargeAccount(accountKey(account), -1);
    if (error instanceof SiteBusy) throw new SiteDataError(BUSY.site(error.retryAfterMs), "busy");
    if (error instanceof GatewayError) throw new SiteDataError(`${MSG.siteFailedPrefix}${error.message}`);
    throw error;
  }
  if (!isRow(data)) throw unexpected();
  return data;
}

/** Confirmations under way in this process, per credential: concurrent refusals ask the site once. */
const CONFIRMING: StatePart<Map<string, Promise<boolean>>> = { name: "refusal-confirmations", create: () => new Map() };

/**
 * Whether the site refuses the token for the account, asked once with `GET /api/user/self` (the
 * sign-in's own question): a 401, a refusal, or another user's object is a refusal; a site that
 * cannot be asked now is not (the call fails, the credential stays).
 */
async function confirmRefusal(ctx: Ctx, accessToken: string): Promise<boolean> {
  const { account, site, deps } = ctx;
  try {
    const budget = { ...deps, perMinute: site.requestsPerMinute ?? deps.perMinute, account: accountKey(account) };
    const answer = await throughGate(site.id, budget, () =>
      callSite({
        siteUrl: site.url,
        path: "/api/user/self",
        query: {},
        method: "GET",
        accessToken,
        userId: account.userId,
        acceptLanguage: deps.acceptLanguage,
        timeoutMs: deps.timeoutMs,
      }),
    );
    if (answer.status === 401) return true;
    const envelope = parseAnswer(answer);
    if (!isRow(envelope)) return false;
    if (envelope.success !== true) return REFUSAL.test(typeof envelope.message === "string" ? envelope.message : "");
    return !isRow(envelope.data) || envelope.data.id !== account.siteUserId;
  } catch {
    return false;
  }
}

/**
 * The site refused the account's token on a call: once the refusal is confirmed (the refused call
 * was `GET /api/user/self` itself, or one more such call says so), the token is no longer the
 * account's credential, and every session and saved account holding it loses its power at once
 * (session/possession.ts). The call's answer either way is the refusal.
 */
async function refusal(ctx: Ctx, request: { path: string; method?: string }): Promise<SiteDataError> {
  const refused = new SiteDataError(MSG.siteRefused, "refused");
  const accessToken = await ctx.token();
  if (accessToken === null) return refused;
  const owner = { siteId: ctx.account.siteId, siteUserId: ctx.account.siteUserId };
  const credential = credentialOf(owner, accessToken);
  const self = request.path === "/api/user/self" && (request.method ?? "GET") === "GET";
  const pending = processState().get(CONFIRMING);
  let confirmed = pending.get(credential);
  if (!confirmed) {
    confirmed = (self ? Promise.resolve(true) : confirmRefusal(ctx, accessToken)).finally(() =>
      pending.delete(credential),
    );
    pending.set(credential, confirmed);
  }
  if (await confirmed) {
    await possession(ctx.deps.db).refused(owner, credential, ctx.account.sessionId);
    logEvent("account.credential_refused", { site: owner.siteId, path: request.path });
  }
  return refused;
}

/**
 * One authenticated GET's envelope whole (a family's fields beside `data` kept), null for a route
 * this build lacks (404); a refused token or an unreachable site is a SiteDataError.
 */
export function readEnvelope(ctx: Ctx, request: SiteRequest): Promise<Record<string, unknown> | null> {
  return exchange(ctx, request, { missingOk: true });
}

/** One authenticated GET; `data` of a successful envelope, null for a missing route when `missingOk`. */
export async function read(ctx: Ctx, request: SiteRequest, opts: { missingOk?: boolean } = {}): Promise<unknown> {
  const data = await exchange(ctx, request, opts);
  if (data === null) return null;
  if (data.success !== true) {
    const message = typeof data.message === "string" ? data.message.trim() : "";
    if (REFUSAL.test(message)) throw await refusal(ctx, request);
    const accessToken = (await ctx.token()) ?? "";
    throw new SiteDataError(`${MSG.siteFailedPrefix}${redact(message, accessToken) || UNEXPECTED}`);
  }
  return data.data;
}

/** Messages of a write's refusal that mean the token or the user is refused (a write's own refusals name tokens too). */
const WRITE_REFUSAL = /access token|未登录|封禁|banned|无权进行此操作|会话无效|用户校验失败|New-Api-User|Veloera-User/i;

/**
 * One write (or a write's status read) on the account's site, never cached, never repeated: the
 * site's envelope as it answered, its message without the token. A refused token, a site that
 * cannot be reached or is throttling are SiteDataErrors, as for reads.
 */
export async function siteWrite(account: Account, request: WriteRequest, deps: SiteDataDeps): Promise<WriteAnswer> {
  const site = await openSite(account, deps);
  const ctx = contextOf(account, site, deps);
  const data = await exchange(ctx, { ...request, query: request.query ?? {} });
  if (data === null) throw unexpected();
  const message = redact(typeof data.message === "string" ? data.message.trim() : "", (await ctx.token()) ?? "");
  if (data.success !== true && WRITE_REFUSAL.test(message)) throw await refusal(ctx, request);
  return { success: data.success === true, message, data: data.data ?? null };
}

/**
 * One call of the proxy (actions/proxy.ts): the site's envelope whole, as it answered (a family's
 * extra top-level fields kept), cleaned of credentials (withoutCredentials); failures as for siteWrite.
 */
export async function siteCall(
  account: Account,
  request: WriteRequest,
  deps: SiteDataDeps,
): Promise<Record<string, unknown>> {
  const site = await openSite(account, deps);
  const ctx = contextOf(account, site, deps);
  const data = await exchange(ctx, { ...request, query: request.query ?? {} });
  if (data === null) throw unexpected();
  const token = (await ctx.token()) ?? "";
  if (data.success !== true && typeof data.message === "string" && WRITE_REFUSAL.test(data.message)) {
    throw await refusal(ctx, request);
  }
  // What passes through is cleaned of credentials, API keys masked: a reveal is its own recorded call.
  return withoutCredentials(data, token, { keys: true });
}

/** The account's site as its last probe saw it (family, money settings, address). */
export const siteProfile = (account: Account, deps: SiteDataDeps) => openSite(account, deps);

/** The site's `/api/status` data (its switches: check-in, Turnstile), kept for a minute. */
export async function siteStatus(account: Account, deps: SiteDataDeps): Promise<Record<string, unknown>> {
  const site = await openSite(account, deps);
  return cached(`${site.id}:${site.url}:status`, 60_000, deps.refresh === true, async () => {
    const ctx = contextOf(account, site, deps);
    const data = await read(ctx, { path: "/api/status", query: {} });
    return isRow(data) ? data : {};
  });
}

/**
 * Forgets the account's kept answers a write changed: all of them (a code raised its balance and
 * wrote its log), or those of one kind (`tokens`: a key created, edited or deleted).
 */
export function forgetAccountReads(account: Account, kind?: "tokens"): void {
  forget(`${account.siteId}:${account.siteUrl}:${account.siteUserId}:${kind === undefined ? "" : `${kind}:`}`);
}

/** One fresh authenticated GET of the account's site (never cached): `data` of its envelope. */
export async function siteRead(account: Account, request: SiteRequest, deps: SiteDataDeps): Promise<unknown> {
  const site = await openSite(account, deps);
  return read(contextOf(account, site, deps), request);
}
