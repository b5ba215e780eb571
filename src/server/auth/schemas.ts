import { z } from "zod";
import { siteSchema } from "../sites/registry";

/** Response shapes of the auth routes: the procedures' outputs, the domain's types and the OpenAPI document's source. */

export const userInfoSchema = z.looseObject({ id: z.number() }).meta({
  id: "UserInfo",
  description:
    "站点 GET /api/user/self 返回的用户对象，原样透传（已去除 access_token、password、original_password、verification_code）。" +
    "站点给出的对象过大时有界保存：嵌套最多 3 层，文本最多 1000 字符，数组最多 50 项；整体仍超过 16 KiB 时只保留 id、username、display_name、role、status、email、group、quota 等常用字段",
});

/** The site's user object; `id` is known to equal the user id given at login. */
export type UserInfo = z.infer<typeof userInfoSchema>;

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

export type LoginSuccess = z.infer<typeof loginSuccessSchema>;

/** The dashboard's own sign-in: the browser keeps only the cookie, never the session token. */
export const signInSuccessSchema = z.object({
  success: z.literal(true),
  data: loginSuccessSchema.shape.data.omit({ sessionToken: true }),
});

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
