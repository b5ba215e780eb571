import { z } from "zod";
import type { Db } from "../db/client";
import { GatewayError, REASON, fetchUserSelf } from "../gateway/client";
import { MSG, failure, type Failure } from "../messages";
import { sealAccessToken, sessionStore } from "../session/store";
import { hotPath } from "../db/hot-path";
import { parseSiteId, type Site } from "../sites/registry";

/** The login body's fields. A field of another type counts as missing, like a falsy one. */
export const loginFields = {
  userId: z.union([z.number(), z.string()]).describe("用户 ID：数字或数字字符串"),
  accessToken: z.string().describe("站点的系统访问令牌，原样作为 Authorization 发给站点"),
  siteId: z.union([z.number(), z.string()]).describe("已注册站点的 id"),
};
export const loginInput = z.object(loginFields).meta({ id: "LoginRequest" });
export type LoginInput = z.infer<typeof loginInput>;

/** The site's user object; `id` is known to equal the user id given at login. */
export type UserInfo = { id: number } & Record<string, unknown>;

export type LoginSuccess = {
  success: true;
  data: { sessionToken: string; userInfo: UserInfo; site: Site };
};

export type LoginOutcome =
  | { result: LoginSuccess; expiresAt: Date }
  | { result: Failure; expiresAt?: undefined };

/** Fields older gateways leak in their user object; never stored nor returned. */
const SECRET_USER_FIELDS = ["access_token", "password", "original_password", "verification_code"];

export function stripSecrets(info: UserInfo): UserInfo {
  const copy = { ...info };
  for (const key of SECRET_USER_FIELDS) delete copy[key];
  return copy;
}

/** A site's message with the token masked, should a site ever echo it (too short to be a secret: as is). */
function redact(message: string, accessToken: string): string {
  return accessToken.trim().length >= 8 ? message.split(accessToken).join("***") : message;
}

function field<T>(schema: z.ZodType<T>, value: unknown): T | undefined {
  const parsed = schema.safeParse(value);
  return parsed.success && parsed.data ? parsed.data : undefined;
}

/** The body's fields that are present: of their type and truthy. Anything else counts as missing. */
export function presentFields(body: Record<string, unknown>): Partial<LoginInput> {
  return {
    userId: field(loginFields.userId, body.userId),
    accessToken: field(loginFields.accessToken, body.accessToken),
    siteId: field(loginFields.siteId, body.siteId),
  };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type LoginDeps = {
  db: Db;
  timeoutMs: number;
  acceptLanguage?: string | null;
  onInternalError?: (error: unknown) => void;
};

/** The login of the contract, step by step in its processing order. */
export async function login(body: unknown, deps: LoginDeps): Promise<LoginOutcome> {
  const fail = (message: string): LoginOutcome => ({ result: failure(message) });
  if (!isPlainObject(body)) return fail(MSG.bodyNotObject);

  // 1. missing or falsy fields
  const { userId, accessToken, siteId: rawSiteId } = presentFields(body);
  if (userId === undefined || accessToken === undefined || rawSiteId === undefined) {
    return fail(MSG.incomplete);
  }

  try {
    // 2. the site
    const siteId = parseSiteId(rawSiteId);
    const site = siteId === null ? null : await hotPath(deps.db).siteById(siteId);
    if (!site) return fail(MSG.siteNotFound);

    // 3. ask the site; the token is sealed for storage meanwhile (crypto runs off the main thread)
    const sealing = sealAccessToken(accessToken);
    sealing.catch(() => undefined); // awaited below only when the login goes on
    const answer = await fetchUserSelf({
      siteUrl: site.url,
      accessToken,
      userId,
      acceptLanguage: deps.acceptLanguage,
      timeoutMs: deps.timeoutMs,
    });
    if (answer === null || answer === undefined) throw new GatewayError(REASON.emptyJson);
    const envelope = answer as { success?: unknown; message?: unknown; data?: unknown };

    // 4. the site said no
    if (!envelope.success) {
      const message = typeof envelope.message === "string" && envelope.message !== "" ? redact(envelope.message, accessToken) : MSG.authFailed;
      return fail(message);
    }

    // 5. the id must be the one given
    const data = envelope.data;
    if (data === null || data === undefined) throw new GatewayError(REASON.noUserInfo);
    if ((data as { id?: unknown }).id !== Number(userId)) return fail(MSG.userMismatch);
    const userInfo = stripSecrets(data as UserInfo);

    // 6. the session
    const { token, expiresAt } = await sessionStore(deps.db).create({
      userId,
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
    // 8. unreachable, not JSON, or any other exception in login (the contract folds them all here)
    if (error instanceof GatewayError) return fail(`${MSG.siteUnreachablePrefix}${error.message}`);
    deps.onInternalError?.(error);
    return fail(`${MSG.siteUnreachablePrefix}${REASON.unavailable}`);
  }
}
