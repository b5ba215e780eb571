import { z } from "zod";

/** Response shapes of the auth routes: the procedures' outputs and the OpenAPI document's source. */

export const siteSchema = z
  .object({ id: z.number().int().positive(), name: z.string(), url: z.url() })
  .meta({ id: "Site", description: "站点（来自站点注册表）" });

export const userInfoSchema = z
  .looseObject({ id: z.number() })
  .meta({
    id: "UserInfo",
    description:
      "站点 GET /api/user/self 返回的用户对象，原样透传（已去除 access_token、password、original_password、verification_code）",
  });

export const loginSuccessSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      sessionToken: z.uuidv4().describe("会话令牌：后续请求以 Authorization: Bearer <sessionToken> 携带"),
      userInfo: userInfoSchema,
      site: siteSchema,
    }),
  })
  .meta({ id: "LoginSuccess" });

export const meSuccessSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      userInfo: userInfoSchema.describe("登录时的用户信息快照"),
      site: siteSchema.optional().describe("站点已被删除时不出现"),
    }),
  })
  .meta({ id: "MeSuccess" });

export const logoutSuccessSchema = z.object({ success: z.literal(true) }).meta({ id: "LogoutSuccess" });

export const failureSchema = z
  .object({ success: z.literal(false), message: z.string() })
  .meta({ id: "Failure", description: "失败：以 message 区分原因（无错误码字段）" });
