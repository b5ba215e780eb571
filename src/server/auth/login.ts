import type { Db } from "../db/client";
import { isDatabaseUnavailable, isStorageFull, isStoreError } from "../db/errors";
import { hotPath } from "../db/hot-path";
import { GatewayError, REASON, fetchUserSelf } from "../gateway/client";
import { MSG, failure, type Failure } from "../core/messages";
import { credentialOf, possession } from "../session/possession";
import { sealAccessToken, sessionStore } from "../session/store";
import { parseSiteId } from "../sites/registry";
import { isPlainObject, presentFields } from "./login-input";
import { keptUserInfo } from "./user-info";
import type { LoginSuccess, UserInfo } from "./schemas";

/**
 * Why a login failed, for callers that act on it (a saved account's renewal): the body was bad,
 * the site is not registered, the site refused the token (or it names another user), or the site
 * could not be asked.
 */
type LoginFailureKind = "input" | "noSite" | "refused" | "unreachable";

export type LoginOutcome =
  | { result: LoginSuccess; expiresAt: Date; kind?: undefined }
  | { result: Failure; expiresAt?: undefined; kind: LoginFailureKind };

/** A site's message with the token masked, should a site ever echo it (too short to be a secret: as is). */
function redact(message: string, accessToken: string): string {
  return accessToken.trim().length >= 8 ? message.split(accessToken).join("***") : message;
}

export type LoginDeps = {
  db: Db;
  timeoutMs: number;
  /** The deployment's budget per site and minute (a site's own one wins). */
  perMinute: number;
  acceptLanguage?: string | null;
  onInternalError?: (error: unknown) => void;
  /**
   * Verifications a workspace asks for (adding, re-authorising, importing accounts) wait in this
   * lane of the site's live calls, taking turns with everyone else's, instead of going first as a
   * person's sign-in does.
   */
  lane?: string;
  /** Whether a site a workspace added itself may be signed in to here (the workspace's own); unset: never. */
  ownSite?: (siteId: number) => Promise<boolean>;
};

/** The login of the contract, step by step in its processing order. */
export async function login(body: unknown, deps: LoginDeps): Promise<LoginOutcome> {
  const fail = (message: string, kind: LoginFailureKind = "input"): LoginOutcome => ({
    result: failure(message),
    kind,
  });
  if (!isPlainObject(body)) return fail(MSG.bodyNotObject);

  // 1. missing or falsy fields
  const { userId, accessToken, siteId: rawSiteId } = presentFields(body);
  if (userId === undefined || accessToken === undefined || rawSiteId === undefined) {
    return fail(MSG.incomplete);
  }

  try {
    // 2. the site
    const siteId = parseSiteId(rawSiteId);
    const record = siteId === null ? null : await hotPath(deps.db).siteById(siteId);
    // A workspace's own site is there for that workspace only (docs/design.md 25).
    if (!record || (record.origin === "workspace" && !(await deps.ownSite?.(record.id))))
      return fail(MSG.siteNotFound, "noSite");
    const site = { id: record.id, name: record.name, url: record.url };

    // 3. ask the site; the token is sealed for storage meanwhile (crypto runs off the main thread)
    const sealing = sealAccessToken(accessToken);
    sealing.catch(() => undefined); // awaited below only when the login goes on
    const answer = await fetchUserSelf(
      { siteUrl: site.url, accessToken, userId, acceptLanguage: deps.acceptLanguage, timeoutMs: deps.timeoutMs },
      { siteId: site.id, perMinute: record.requestsPerMinute ?? deps.perMinute, lane: deps.lane },
    );
    if (answer === null || answer === undefined) throw new GatewayError(REASON.emptyJson);
    const envelope = answer as { success?: unknown; message?: unknown; data?: unknown };

    // 4. the site said no: a token someone here held is no longer the account's credential (docs/design.md 24)
    const siteUserId = Number(userId);
    const owner = { siteId: site.id, siteUserId };
    const credential = credentialOf(owner, accessToken);
    if (!envelope.success) {
      if (Number.isSafeInteger(siteUserId)) await possession(deps.db).refused(owner, credential);
      const message =
        typeof envelope.message === "string" && envelope.message !== ""
          ? redact(envelope.message, accessToken)
          : MSG.authFailed;
      return fail(message, "refused");
    }

    // 5. the id must be the one given
    const data = envelope.data;
    if (data === null || data === undefined) throw new GatewayError(REASON.noUserInfo);
    if ((data as { id?: unknown }).id !== siteUserId || !Number.isSafeInteger(siteUserId))
      return fail(MSG.userMismatch, "refused");
    const userInfo = keptUserInfo(data as UserInfo);

    // 6. the token is the account's credential now (an older one has ended: docs/design.md 24), and the session
    await possession(deps.db).accepted(owner, credential);
    const { token, expiresAt } = await sessionStore(deps.db).create({
      credential,
      userId,
      siteUserId,
      sealedAccessToken: await sealing,
      siteId: site.id,
      siteUrl: site.url,
      userInfo,
    });

    // 7. success
    return {
      result: { success: true, data: { sessionToken: token, userInfo, site } },
      expiresAt,
    };
  } catch (error) {
    // 8. unreachable, not JSON, or any other exception in login (the contract folds them all here);
    // but a store that is down or full is this service's fault, never the site's: a 503 says so.
    if (error instanceof GatewayError) return fail(`${MSG.siteUnreachablePrefix}${error.message}`, "unreachable");
    if (isStorageFull(error) || isDatabaseUnavailable(error) || isStoreError(error)) throw error;
    deps.onInternalError?.(error);
    return fail(`${MSG.siteUnreachablePrefix}${REASON.unavailable}`, "unreachable");
  }
}
