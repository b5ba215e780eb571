import { BUSY, MSG } from "../../core/messages";
import { REASON } from "../../gateway/client";

/** What the OpenAPI document's parts share: schemas, answers, parameters and route shapes. */
export const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
export const json = (schema: object, examples?: Record<string, { summary: string; value: unknown }>) => ({
  "application/json": { schema, ...(examples ? { examples } : {}) },
});
export const failureExample = (message: string) => ({ summary: message, value: { success: false, message } });

export function loginExamples() {
  const reasons = Object.entries(REASON).map(([key, r]) => [key, typeof r === "function" ? r(200) : r] as const);
  return {
    success: {
      summary: "登录成功",
      value: {
        success: true,
        data: {
          sessionToken: "3f0c9a4e-8b8d-4c2e-9f4a-2b6d7c1e5a90",
          userInfo: { id: 1, username: "demo", display_name: "演示用户", group: "default", quota: 500000 },
          site: { id: 1, name: "演示站点", url: "https://api.example.com" },
        },
      },
    },
    bodyNotObject: failureExample(MSG.bodyNotObject),
    incomplete: failureExample(MSG.incomplete),
    siteNotFound: failureExample(MSG.siteNotFound),
    siteMessage: failureExample("无权进行此操作，access token 无效"),
    authFailed: failureExample(MSG.authFailed),
    userMismatch: failureExample(MSG.userMismatch),
    ...Object.fromEntries(
      reasons.map(([key, r]) => [`unreachable_${key}`, failureExample(`${MSG.siteUnreachablePrefix}${r}`)]),
    ),
  };
}

export const UNAUTHORIZED = {
  description: "未携带会话、会话无效或已过期",
  content: json(ref("Failure"), { unauthenticated: failureExample(MSG.unauthenticated) }),
};
export const FORBIDDEN = {
  description: "以 Cookie 认证、且 Origin 指向其他来源的 POST（CSRF 防护）",
  content: json(ref("Failure"), { badOrigin: failureExample(MSG.badOrigin) }),
};
export const UNAVAILABLE = {
  description: "数据库暂时不可用",
  content: json(ref("Failure"), { dbUnavailable: failureExample(MSG.dbUnavailable) }),
};
export const INTERNAL = {
  description: "服务器内部错误",
  content: json(ref("Failure"), { internal: failureExample(MSG.internal) }),
};
export const SESSION_SECURITY = [{ bearerAuth: [] }, { cookieAuth: [] }, { workspaceCookieAuth: [] }];
export const WORKSPACE_SECURITY = [{ bearerAuth: [] }, { workspaceCookieAuth: [] }];

/** Which of a workspace's accounts an account route reads (with a workspace session only). */
export const ACCOUNT_PARAM = {
  name: "account",
  in: "query",
  required: false,
  description:
    "使用工作区会话或 API 令牌时：要读取的工作区账户 id（/api/workspace/accounts 中的 id）；省略时为该设备当前选中的账户，未选过则为列表第一个",
  schema: { type: "string", pattern: "^\\d{1,12}$" },
};
export const ACCOUNT_NOT_FOUND = {
  description: "工作区中没有 account 所指的账户（或工作区还没有账户）",
  content: json(ref("Failure"), {
    notFound: failureExample("工作区中没有这个账户"),
    empty: failureExample("工作区中还没有账户，请先添加账户"),
  }),
};
export const ADMIN_SECURITY = [{ bearerAuth: [] }, { adminCookieAuth: [] }];

/** A download: the file on success; a bad parameter is the JSON failure, never a broken file. */
export function fileRoute(operationId: string, summary: string, description: string, mime: string) {
  return {
    get: {
      operationId,
      summary,
      description: `${description} 每次导出记一行日志（谁、范围、行数），不含令牌。`,
      security: SESSION_SECURITY,
      parameters: [ACCOUNT_PARAM],
      responses: {
        "200": {
          description: "成功时为文件（Content-Disposition: attachment，文件名含范围）；参数无效时为 JSON 失败答复",
          content: {
            [mime]: { schema: { type: "string", format: "binary" } },
            ...json(ref("Failure"), { badParam: failureExample("结束日期不能早于开始日期（参数 to）") }),
          },
        },
        "401": UNAUTHORIZED,
        "404": ACCOUNT_NOT_FOUND,
        "500": INTERNAL,
        "503": UNAVAILABLE,
      },
    },
  };
}

/** An operator's site operation: the envelope, a refusal (bad address, unknown id, unconfirmed) as its message. */
export function adminOperation(operationId: string, summary: string, description: string) {
  return {
    operationId,
    summary,
    description: `${description} 需要管理员会话（Bearer 或管理员 Cookie）；每次变更记入审计日志。`,
    security: ADMIN_SECURITY,
    responses: {
      "200": {
        description: "成功时 success 为 true；地址无效、站点不存在或需要确认时 success 为 false，message 说明原因",
        content: json({
          oneOf: [
            { type: "object", properties: { success: { const: true }, data: {} }, required: ["success", "data"] },
            {
              type: "object",
              properties: {
                success: { const: false },
                message: { type: "string" },
                needsConfirmation: { type: "boolean" },
                probe: { type: "object" },
              },
              required: ["success", "message"],
            },
          ],
        }),
      },
      "401": UNAUTHORIZED,
      "403": FORBIDDEN,
      "500": INTERNAL,
      "503": UNAVAILABLE,
    },
  };
}

/** A ledger analytics route: the range, the accounts and the time zone, answered from our store. */
export function ledgerRoute(operationId: string, summary: string, description: string, success: string) {
  return {
    get: {
      operationId,
      summary,
      description: `${description} 只能读取有有效会话的账户的账本。`,
      security: SESSION_SECURITY,
      parameters: [ACCOUNT_PARAM],
      responses: {
        "200": {
          description:
            "成功时 success 为 true；参数无效时 success 为 false，message 说明哪个参数、为什么（如「结束日期不能早于开始日期（参数 to）」）",
          content: json(
            { oneOf: [ref(success), ref("Failure")] },
            {
              badParam: failureExample("结束日期不能早于开始日期（参数 to）"),
            },
          ),
        },
        "401": UNAUTHORIZED,
        "404": ACCOUNT_NOT_FOUND,
        "500": INTERNAL,
        "503": UNAVAILABLE,
      },
    },
  };
}

/** Every answer a site-data route can give with HTTP 200 besides success. */
export function siteDataFailures() {
  return {
    badParam: failureExample("每页条数超出范围（参数 pageSize）"),
    refused: failureExample(MSG.siteRefused),
    busy: failureExample(BUSY.site(20_000)),
    accountBusy: failureExample(BUSY.account(40_000)),
    failed: failureExample(`${MSG.siteFailedPrefix}${REASON.timeout}`),
    siteMessage: failureExample(`${MSG.siteFailedPrefix}查询日志失败`),
    removed: failureExample(MSG.siteRemoved),
  };
}

export function siteDataRoute(operationId: string, summary: string, description: string, success: string) {
  return {
    get: {
      operationId,
      summary,
      description:
        `${description} 通过该账户所在站点、以其（加密保存的）访问令牌实时读取；答案按账户缓存片刻，` +
        "同一站点的请求受每分钟预算（SITE_REQUESTS_PER_MINUTE，登录也计入）与并发上限保护，等待的账户轮流发出；" +
        "有其他账户同时使用该站点时，一个账户每分钟最多用站点预算的一半（该账户的站点请求过于频繁，请 N 秒后再试）；独自使用时可用满整个预算。",
      security: SESSION_SECURITY,
      parameters: [ACCOUNT_PARAM],
      responses: {
        "200": {
          description: "成功时 success 为 true；参数无效、站点拒绝或失败时 success 为 false，message 说明原因",
          content: json({ oneOf: [ref(success), ref("Failure")] }, siteDataFailures()),
        },
        "401": UNAUTHORIZED,
        "404": ACCOUNT_NOT_FOUND,
        "500": INTERNAL,
        "503": UNAVAILABLE,
      },
    },
  };
}
