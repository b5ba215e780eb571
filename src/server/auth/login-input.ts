import { z } from "zod";
import { parseSiteId } from "../sites/registry";

/** The login body's fields. A field of another type counts as missing, like a falsy one. */
const loginFields = {
  userId: z.union([z.number(), z.string()]).describe("用户 ID：数字或数字字符串"),
  accessToken: z.string().describe("站点的系统访问令牌，原样作为 Authorization 发给站点"),
  siteId: z.union([z.number(), z.string()]).describe("已注册站点的 id"),
};
export const loginInput = z.object(loginFields).meta({ id: "LoginRequest" });
export type LoginInput = z.infer<typeof loginInput>;

function field<T>(schema: z.ZodType<T>, value: unknown): T | undefined {
  const parsed = schema.safeParse(value);
  return parsed.success && parsed.data ? parsed.data : undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The body's fields that are present: of their type and truthy. Anything else counts as missing. */
export function presentFields(body: unknown): Partial<LoginInput> {
  if (!isPlainObject(body)) return {};
  return {
    userId: field(loginFields.userId, body.userId),
    accessToken: field(loginFields.accessToken, body.accessToken),
    siteId: field(loginFields.siteId, body.siteId),
  };
}

/** An account: a site and a user's numeric id on it. */
export type SignInAccount = { siteId: number; siteUserId: number };

/**
 * The account a login body names, however the ids are spelled (`1`, `"01"`, `"1.0"`, `"0x1"` are
 * one user: the contract compares Number(userId)); null when it names none.
 */
export function signInAccountOf(body: unknown): SignInAccount | null {
  const { userId, siteId } = presentFields(body);
  const site = parseSiteId(siteId);
  const siteUserId = userId === undefined ? NaN : Number(userId);
  return site !== null && Number.isSafeInteger(siteUserId) ? { siteId: site, siteUserId } : null;
}
