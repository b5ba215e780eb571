import { z } from "zod";
import {
  logItemSchema,
  logsPageSchema,
  logsSuccess,
  moneySchema,
  ledgerStatusSchema,
  ledgerStatusSuccess,
  usageBalanceSchema,
  usageBalanceSuccess,
  exportCountSchema,
  exportCountSuccess,
  usageSummarySchema,
  usageSummarySuccess,
  overviewRowSchema,
  overviewSchema,
  overviewSuccess,
  summarySchema,
  tokensPageSchema,
  topupsPageSchema,
  summarySuccess,
  tokenItemSchema,
  tokensSuccess,
  topupItemSchema,
  topupsSuccess,
} from "../api/schemas/accounts";
import { loginInput } from "../auth/login-input";
import { loginSuccessSchema, logoutSuccessSchema, meSuccessSchema, userInfoSchema } from "../auth/schemas";
import { MSG, failureSchema } from "../core/messages";
import { REASON } from "../gateway/client";
import { siteSchema } from "../sites/registry";

/**
 * The OpenAPI 3.1 document of the REST routes, generated from the zod schemas the procedures
 * validate with. JSON Schema 2020-12 is OpenAPI 3.1's own dialect, so zod's output is used as is.
 */

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: object, examples?: Record<string, { summary: string; value: unknown }>) => ({
  "application/json": { schema, ...(examples ? { examples } : {}) },
});
const failureExample = (message: string) => ({ summary: message, value: { success: false, message } });

function components() {
  const registry = z.registry<{ id: string }>();
  for (const s of [
    loginInput,
    siteSchema,
    userInfoSchema,
    loginSuccessSchema,
    meSuccessSchema,
    logoutSuccessSchema,
    failureSchema,
    summarySuccess,
    logsSuccess,
    tokensSuccess,
    topupsSuccess,
    logItemSchema,
    tokenItemSchema,
    topupItemSchema,
    summarySchema,
    logsPageSchema,
    tokensPageSchema,
    topupsPageSchema,
    moneySchema,
    overviewSchema,
    overviewSuccess,
    overviewRowSchema,
    ledgerStatusSchema,
    ledgerStatusSuccess,
    usageSummarySchema,
    usageSummarySuccess,
    usageBalanceSchema,
    usageBalanceSuccess,
    exportCountSchema,
    exportCountSuccess,
  ]) {
    const id = (s.meta() as { id?: string } | undefined)?.id;
    if (!id) throw new Error("schema without id");
    registry.add(s, { id });
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io: "output",
    uri: (id) => `#/components/schemas/${id}`,
  });
  // Each component is embedded in the document: drop the per-schema dialect and id markers.
  return Object.fromEntries(
    Object.entries(schemas).map(([id, s]) => {
      const copy: Record<string, unknown> = { ...s };
      delete copy.$schema;
      delete copy.$id;
      // Clients may send more fields than these; only responses are closed.
      if (id === "LoginRequest") delete copy.additionalProperties;
      return [id, copy];
    }),
  );
}

/** Every message login can answer with HTTP 200 (besides a site's own), as named examples. */
function loginExamples() {
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

const UNAUTHORIZED = {
  description: "未携带会话、会话无效或已过期",
  content: json(ref("Failure"), { unauthenticated: failureExample(MSG.unauthenticated) }),
};
const FORBIDDEN = {
  description: "以 Cookie 认证、且 Origin 指向其他来源的 POST（CSRF 防护）",
  content: json(ref("Failure"), { badOrigin: failureExample(MSG.badOrigin) }),
};
const UNAVAILABLE = {
  description: "数据库暂时不可用",
  content: json(ref("Failure"), { dbUnavailable: failureExample(MSG.dbUnavailable) }),
};
const INTERNAL = {
  description: "服务器内部错误",
  content: json(ref("Failure"), { internal: failureExample(MSG.internal) }),
};
const SESSION_SECURITY = [{ bearerAuth: [] }, { cookieAuth: [] }];
const ADMIN_SECURITY = [{ bearerAuth: [] }, { adminCookieAuth: [] }];

const intQuery = (name: string, description: string, min: number, max: number, dflt?: number) => ({
  name,
  in: "query",
  required: false,
  description,
  schema: { type: "integer", minimum: min, maximum: max, ...(dflt !== undefined ? { default: dflt } : {}) },
});
const stringQuery = (name: string, description: string, schema: object = { type: "string", maxLength: 128 }) => ({
  name,
  in: "query",
  required: false,
  description,
  schema,
});
const REFRESH = stringQuery("refresh", "1 或 true：不用缓存，立即向站点取数（仍受站点请求预算限制）", {
  type: "string",
  enum: ["1", "0", "true", "false"],
});
const PAGING = [
  intQuery("page", "页码，从 1 开始", 1, 10_000, 1),
  intQuery("pageSize", "每页条数（one-api 站点固定 10）", 1, 100, 20),
  REFRESH,
];

const RANGE_PARAMS = [
  stringQuery("from", "起始日 YYYY-MM-DD（含，tz 时区）；默认 to 之前 29 天", { type: "string", maxLength: 10 }),
  stringQuery("to", "结束日 YYYY-MM-DD（含）；默认今天；不得早于 from", { type: "string", maxLength: 10 }),
  stringQuery("accounts", "active：当前账户（默认）；all：本浏览器 Cookie 中的全部账户（Bearer 时只有该会话的账户）", {
    type: "string",
    enum: ["active", "all"],
  }),
  stringQuery("tz", "IANA 时区名，如 Asia/Shanghai；默认服务器时区", { type: "string", maxLength: 64 }),
];

const EXPORT_FILTERS = [
  stringQuery("type", "日志类型", {
    type: "string",
    enum: ["topup", "consume", "manage", "system", "error", "refund"],
  }),
  stringQuery("model", "模型名（精确匹配）"),
  stringQuery("token", "令牌名（精确匹配）"),
];

/** A download: the file on success; a bad parameter is the JSON failure, never a broken file. */
function fileRoute(operationId: string, summary: string, description: string, mime: string, parameters: object[]) {
  return {
    get: {
      operationId,
      summary,
      description: `${description} 每次导出记一行日志（谁、范围、行数），不含令牌。`,
      security: SESSION_SECURITY,
      parameters,
      responses: {
        "200": {
          description: "成功时为文件（Content-Disposition: attachment，文件名含范围）；参数无效时为 JSON 失败答复",
          content: {
            [mime]: { schema: { type: "string", format: "binary" } },
            ...json(ref("Failure"), { badParam: failureExample(`${MSG.badParamPrefix}from`) }),
          },
        },
        "401": UNAUTHORIZED,
        "500": INTERNAL,
        "503": UNAVAILABLE,
      },
    },
  };
}

const SITE_ID = {
  name: "id",
  in: "path",
  required: true,
  description: "站点 id",
  schema: { type: "integer", minimum: 1 },
};
const SITE_BODY = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 200 },
    url: { type: "string", maxLength: 2048 },
    requestsPerMinute: { type: ["integer", "null"], minimum: 1, maximum: 100000 },
    confirmUnreachable: { type: "boolean" },
    sameGateway: {
      type: "boolean",
      description: "仅修改地址时：新地址是同一网关（账本保留）；须新地址可访问且探测到的类型与系统名称与原站点一致",
    },
  },
};

/** An operator's site operation: the envelope, a refusal (bad address, unknown id, unconfirmed) as its message. */
function adminOperation(
  operationId: string,
  summary: string,
  description: string,
  parameters: object[],
  body?: object,
) {
  return {
    operationId,
    summary,
    description: `${description} 需要管理员会话（Bearer 或管理员 Cookie）；每次变更记入审计日志。`,
    security: ADMIN_SECURITY,
    parameters,
    ...(body ? { requestBody: { required: true, content: json(body) } } : {}),
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
function ledgerRoute(operationId: string, summary: string, description: string, success: string, extra: object[]) {
  return {
    get: {
      operationId,
      summary,
      description: `${description} 只能读取有有效会话的账户的账本。`,
      security: SESSION_SECURITY,
      parameters: [...RANGE_PARAMS, ...extra],
      responses: {
        "200": {
          description: "成功时 success 为 true；参数无效时 success 为 false，message 为「请求参数无效: <参数>」",
          content: json(
            { oneOf: [ref(success), ref("Failure")] },
            {
              badParam: failureExample(`${MSG.badParamPrefix}from`),
            },
          ),
        },
        "401": UNAUTHORIZED,
        "500": INTERNAL,
        "503": UNAVAILABLE,
      },
    },
  };
}

/** Every answer a site-data route can give with HTTP 200 besides success. */
function siteDataFailures() {
  return {
    badParam: failureExample(`${MSG.badParamPrefix}pageSize`),
    refused: failureExample(MSG.siteRefused),
    busy: failureExample(MSG.siteBusy),
    accountBusy: failureExample(MSG.accountBusy),
    failed: failureExample(`${MSG.siteFailedPrefix}${REASON.timeout}`),
    siteMessage: failureExample(`${MSG.siteFailedPrefix}查询日志失败`),
    removed: failureExample(MSG.siteRemoved),
  };
}

function siteDataRoute(
  operationId: string,
  summary: string,
  description: string,
  success: string,
  parameters: object[],
) {
  return {
    get: {
      operationId,
      summary,
      description:
        `${description} 通过该账户所在站点、以其（加密保存的）访问令牌实时读取；答案按账户缓存片刻，` +
        "同一站点的请求受每分钟预算（SITE_REQUESTS_PER_MINUTE，登录也计入）与并发上限保护，等待的账户轮流发出；" +
        "一个账户每分钟最多用站点预算的一半（该账户的站点请求过于频繁，请稍后再试）。",
      security: SESSION_SECURITY,
      parameters,
      responses: {
        "200": {
          description: "成功时 success 为 true；参数无效、站点拒绝或失败时 success 为 false，message 说明原因",
          content: json({ oneOf: [ref(success), ref("Failure")] }, siteDataFailures()),
        },
        "401": UNAUTHORIZED,
        "500": INTERNAL,
        "503": UNAVAILABLE,
      },
    },
  };
}

let cached: object | undefined;

export function openApiDocument(): object {
  cached ??= {
    openapi: "3.1.0",
    info: {
      title: "网关站点控制台 API",
      version: "1.0.0",
      description:
        "用所选网关站点（one-api / new-api 系列）的用户ID与系统访问令牌登录，取得会话令牌。" +
        "除会话检查、请求体大小与频率限制外，所有结果都以 HTTP 200 返回，由 success 字段区分。",
    },
    paths: {
      "/api/auth/login": {
        post: {
          operationId: "login",
          summary: "登录",
          description:
            "按顺序检查：请求体是 JSON 对象；userId、accessToken、siteId 齐全且为真值；站点存在；" +
            "以 Authorization: <accessToken> 调用站点的 GET /api/user/self；站点返回的 data.id 等于 Number(userId)。",
          security: [],
          requestBody: { required: true, content: json(ref("LoginRequest")) },
          responses: {
            "200": {
              description: "登录结果：成功时带会话令牌，并以 Set-Cookie 设置浏览器会话",
              content: json({ oneOf: [ref("LoginSuccess"), ref("Failure")] }, loginExamples()),
            },
            "403": {
              description:
                "来自其他站点的浏览器请求（Origin 指向其他来源或为 null，或 Sec-Fetch-Site: cross-site）；不带 Origin 的请求不受影响",
              content: json(ref("Failure"), { badOrigin: failureExample(MSG.badOrigin) }),
            },
            "413": {
              description: "请求体超过 64 KiB",
              content: json(ref("Failure"), { tooLarge: failureExample(MSG.bodyTooLarge) }),
            },
            "429": {
              description:
                "登录尝试过于频繁（按客户端地址计数；每个账户（站点与 Number(userId)）每分钟接受的新地址数也有限）",
              headers: { "Retry-After": { description: "可以重试前的秒数", schema: { type: "integer", minimum: 1 } } },
              content: json(ref("Failure"), { rateLimited: failureExample(MSG.rateLimited) }),
            },
            "500": INTERNAL,
            "503": UNAVAILABLE,
          },
        },
      },
      "/api/auth/logout": {
        post: {
          operationId: "logout",
          summary: "退出登录",
          description: "删除当前会话，并清除浏览器的会话 Cookie。不读取请求体。",
          security: SESSION_SECURITY,
          responses: {
            "200": {
              description: "会话已删除",
              content: json(ref("LogoutSuccess"), { ok: { summary: "已退出", value: { success: true } } }),
            },
            "401": UNAUTHORIZED,
            "403": FORBIDDEN,
            "500": INTERNAL,
            "503": UNAVAILABLE,
          },
        },
      },
      "/api/auth/me": {
        get: {
          operationId: "me",
          summary: "当前会话",
          description:
            "返回登录时的用户信息快照（不再访问站点）与站点注册表中的当前站点；站点已被删除时没有 site 字段。",
          security: SESSION_SECURITY,
          responses: {
            "200": { description: "会话信息", content: json(ref("MeSuccess")) },
            "401": UNAUTHORIZED,
            "500": INTERNAL,
            "503": UNAVAILABLE,
          },
        },
      },
      "/api/account/summary": siteDataRoute(
        "accountSummary",
        "账户概览",
        "剩余额度、已用额度、请求次数、今日消费（tz 时区零点起）与站点的货币设置。",
        "AccountSummarySuccess",
        [
          stringQuery("tz", "IANA 时区名，如 Asia/Shanghai；默认服务器时区", { type: "string", maxLength: 64 }),
          REFRESH,
        ],
      ),
      "/api/account/logs": siteDataRoute(
        "accountLogs",
        "使用日志",
        "按时间倒序分页；可按类型、模型、令牌名与时间范围（最长 366 天）筛选。",
        "LogsPageSuccess",
        [
          ...PAGING,
          stringQuery("type", "日志类型", {
            type: "string",
            enum: ["topup", "consume", "manage", "system", "error", "refund"],
          }),
          stringQuery("model", "模型名（精确匹配）"),
          stringQuery("token", "令牌名（精确匹配）"),
          stringQuery("from", "起始时间：ISO 8601 或 Unix 秒", { type: "string", maxLength: 40 }),
          stringQuery("to", "结束时间：ISO 8601 或 Unix 秒；不得早于 from", { type: "string", maxLength: 40 }),
        ],
      ),
      "/api/accounts/overview": siteDataRoute(
        "accountsOverview",
        "全部账户概览",
        "本浏览器（Cookie）中的每个账户各一行：实时余额、今日消费与请求数、状态（正常、站点无法访问、令牌被拒绝、会话已过期），" +
          "以及折合美元的合计。各站点并行读取，一个站点挂起或失败只影响它自己那一行（最多等待 SITE_TIMEOUT_MS）。" +
          "以 Bearer 令牌调用时只有该令牌的账户一行。",
        "AccountsOverviewSuccess",
        [stringQuery("tz", "IANA 时区名；默认服务器时区", { type: "string", maxLength: 64 }), REFRESH],
      ),
      "/api/usage/status": {
        get: {
          operationId: "usageStatus",
          summary: "账本同步状态",
          description: "当前账户的用量账本：条数、已覆盖的时间范围、是否正在同步及进度、上次错误。",
          security: SESSION_SECURITY,
          responses: {
            "200": { description: "账本状态", content: json(ref("LedgerStatusSuccess")) },
            "401": UNAUTHORIZED,
            "500": INTERNAL,
            "503": UNAVAILABLE,
          },
        },
      },
      "/api/usage/summary": ledgerRoute(
        "usageSummary",
        "用量分析",
        "从本服务的账本统计消费（美元与额度）、请求数与 tokens：按日（范围内每一天，含无消费的日子）、模型、令牌或日志类型分组。" +
          "day/model/token 分组只计消费日志（与站点自己的统计一致），type 分组计每种日志。",
        "UsageSummarySuccess",
        [
          stringQuery("groupBy", "分组方式，默认 day", { type: "string", enum: ["day", "model", "token", "type"] }),
          stringQuery("split", "groupBy=day 时按模型拆分每天的美元消费", { type: "string", enum: ["model"] }),
        ],
      ),
      "/api/usage/balance": ledgerRoute(
        "usageBalance",
        "余额走势",
        "每次同步时记录的站点余额（范围内每天最后一次），最近 7 天的日均消费（美元），以及按此速度余额还能用的天数。",
        "UsageBalanceSuccess",
        [],
      ),
      "/api/export/count": ledgerRoute(
        "exportCount",
        "导出行数",
        "CSV 导出（同样的参数）将包含的行数与文件名，供下载前显示。",
        "ExportCountSuccess",
        EXPORT_FILTERS,
      ),
      "/api/export/usage.csv": fileRoute(
        "exportUsageCsv",
        "导出 CSV",
        "账本中的日志逐行导出为 CSV：UTF-8 带 BOM、CRLF 换行、RFC 4180 引号规则（Excel 与 WPS 可直接打开）；" +
          "以 = + - @ 制表符或回车开头的文字单元格前加 ' 以防公式注入（数字不变）。" +
          "列：时间（tz 时区）、站点、用户、类型、模型、令牌、提示 tokens、补全 tokens、额度、金额 (USD)、耗时 (ms)、流式、说明。" +
          "边读边发：内存不随导出大小增长，客户端断开即停止读取。范围最长 366 天。",
        "text/csv",
        [...RANGE_PARAMS, ...EXPORT_FILTERS],
      ),
      "/api/export/statement.pdf": fileRoute(
        "exportStatementPdf",
        "月度对账单 PDF",
        "某月的 A4 对账单：每个账户的站点与用户、当月消费（美元与站点货币）、期初与期末余额（有同步记录时）、按模型与按令牌的消费表、" +
          "每日消费图、充值，以及生成时间与账本覆盖范围（未完全同步的月份会注明）；多个账户时首页为汇总。中文以文字嵌入，可搜索、可复制。" +
          "按模型与按令牌的表只列最大的 29 行，其余合为「其他（N 项）」。每个实例同时生成 2 份、排队 4 份，" +
          "再多时答复 HTTP 503（对账单生成繁忙，请稍后再试）并带 Retry-After。",
        "application/pdf",
        [
          {
            ...stringQuery("month", "月份 YYYY-MM（必填）", { type: "string", pattern: "^\\d{4}-(0[1-9]|1[0-2])$" }),
            required: true,
          },
          ...RANGE_PARAMS.slice(2),
        ],
      ),
      "/api/admin/login": {
        post: {
          operationId: "adminLogin",
          summary: "管理员登录",
          description:
            "以管理员密码（在服务器上用 npm run sites -- admin-password 设置，只保存 scrypt 散列）登录，取得管理员会话令牌（8 小时），" +
            "可作 Bearer 使用，同时设置 HttpOnly 的管理员 Cookie。管理员会话与网关账户的会话互不通用。",
          security: [],
          requestBody: {
            required: true,
            content: json({ type: "object", properties: { password: { type: "string" } }, required: ["password"] }),
          },
          responses: {
            "200": {
              description: "登录成功",
              content: json({
                type: "object",
                properties: {
                  success: { const: true },
                  data: { type: "object", properties: { token: { type: "string" } }, required: ["token"] },
                },
                required: ["success", "data"],
              }),
            },
            "401": {
              description: "密码错误（缺少或类型不对也是同一答复）",
              content: json(ref("Failure"), { wrong: failureExample("管理员密码错误") }),
            },
            "403": {
              description: "来自其他站点的浏览器请求",
              content: json(ref("Failure"), { badOrigin: failureExample(MSG.badOrigin) }),
            },
            "412": {
              description: "尚未设置管理员密码",
              content: json(ref("Failure"), {
                notSet: failureExample("尚未设置管理员密码：请在服务器上运行 npm run sites -- admin-password"),
              }),
            },
            "413": {
              description: "请求体超过 64 KiB",
              content: json(ref("Failure"), { tooLarge: failureExample(MSG.bodyTooLarge) }),
            },
            "429": {
              description: "尝试过于频繁（按客户端地址，且所有地址合计也有上限）",
              headers: { "Retry-After": { description: "可以重试前的秒数", schema: { type: "integer", minimum: 1 } } },
              content: json(ref("Failure"), { rateLimited: failureExample(MSG.rateLimited) }),
            },
            "500": INTERNAL,
            "503": UNAVAILABLE,
          },
        },
      },
      "/api/admin/logout": {
        post: {
          operationId: "adminLogout",
          summary: "管理员退出",
          description: "结束当前管理员会话（Bearer 或管理员 Cookie）。",
          security: ADMIN_SECURITY,
          responses: {
            "200": { description: "已退出", content: json(ref("LogoutSuccess")) },
            "401": UNAUTHORIZED,
            "403": FORBIDDEN,
            "500": INTERNAL,
            "503": UNAVAILABLE,
          },
        },
      },
      "/api/admin/sites": {
        get: adminOperation(
          "adminSites",
          "站点列表",
          "每个站点：id、名称、地址、探测到的类型与版本、货币设置、健康状况（可达、延迟、上次探测时间与错误）、每分钟请求预算、有效会话数与账本条数。",
          [],
        ),
        post: adminOperation(
          "adminAddSite",
          "添加站点",
          "先校验地址（http/https，不含用户名密码与 # 片段）并探测 GET /api/status，答复中带探测结果（类型、版本、系统名、quota_per_unit）。" +
            "站点无法访问时答复 needsConfirmation，除非 confirmUnreachable 为 true。",
          [],
          SITE_BODY,
        ),
      },
      "/api/admin/sites/{id}": {
        patch: adminOperation(
          "adminEditSite",
          "修改站点",
          "修改名称、地址（新地址先探测，规则同添加）或每分钟请求预算（null 为默认值）。" +
            "地址一变，在旧地址登录的会话全部结束（访问令牌只发往用户登录时的地址），用户需在新地址重新登录；" +
            "账本另行保存、新地址的用户无法读取，除非 sameGateway 为 true 且探测确认是同一网关。答复的 move 说明结束的会话数与账本去向。",
          [SITE_ID],
          SITE_BODY,
        ),
        delete: adminOperation(
          "adminRemoveSite",
          "移除站点",
          "不带 confirm=1 时不移除，只答复该站点的有效会话数；带 confirm=1 时移除。移除后这些会话照常可用（me 不再带 site）。",
          [SITE_ID, stringQuery("confirm", "1：确认移除", { type: "string", enum: ["1", "true"] })],
        ),
      },
      "/api/admin/sites/{id}/probe": {
        post: adminOperation(
          "adminProbeSite",
          "立即探测",
          "立即探测该站点的 /api/status，保存类型、货币设置与健康状况。",
          [SITE_ID],
        ),
      },
      "/api/admin/audit": {
        get: {
          operationId: "adminAudit",
          summary: "审计日志",
          description:
            "管理员登录、登录失败、密码修改与站点变更（含变更前后，命令行的变更也在内），按时间倒序分页。" +
            "登录失败按来源地址每 10 分钟合并为一条，count 为次数，因此真正的变更不会被挤出。下一页用答复的 next 作为 before。",
          security: ADMIN_SECURITY,
          parameters: [
            stringQuery(
              "actions",
              "只看这些操作，逗号分隔：signIn、signInFailed、password、siteAdd、siteEdit、siteRemove",
            ),
            stringQuery("siteId", "只看这个站点的变更", { type: "string", pattern: "^[0-9]{1,10}$" }),
            stringQuery("before", "只看 id 小于它的条目（上一页答复的 next）", {
              type: "string",
              pattern: "^[0-9]{1,10}$",
            }),
            stringQuery("limit", "每页条数，1–200，默认 50", { type: "string", pattern: "^[0-9]{1,3}$" }),
          ],
          responses: {
            "200": {
              description: "审计日志的一页；参数无效时为失败答复（请求参数无效: <参数>）",
              content: json({
                oneOf: [
                  {
                    type: "object",
                    properties: {
                      success: { const: true },
                      data: {
                        type: "object",
                        properties: {
                          entries: {
                            type: "array",
                            items: {
                              type: "object",
                              properties: {
                                id: { type: "integer" },
                                at: {
                                  type: "string",
                                  format: "date-time",
                                  description: "发生时间（合并的登录失败：第一次）",
                                },
                                action: {
                                  type: "string",
                                  enum: ["signIn", "signInFailed", "password", "siteAdd", "siteEdit", "siteRemove"],
                                },
                                actor: { type: "string", description: "客户端地址，或「命令行（主机用户）」" },
                                siteId: { type: ["integer", "null"] },
                                count: { type: "integer", description: "合并的次数（登录失败），其余为 1" },
                                before: { description: "变更前（站点变更时）" },
                                after: {
                                  description:
                                    "变更后（站点变更时；迁移地址时含 endedSessions、ledger）；合并的登录失败为最后一次的时间",
                                },
                              },
                              required: ["id", "at", "action", "actor", "siteId", "count", "before", "after"],
                            },
                          },
                          next: { type: ["integer", "null"], description: "更早一页的 before；没有更早的为 null" },
                        },
                        required: ["entries", "next"],
                      },
                    },
                    required: ["success", "data"],
                  },
                  ref("Failure"),
                ],
              }),
            },
            "401": UNAUTHORIZED,
            "500": INTERNAL,
            "503": UNAVAILABLE,
          },
        },
      },
      "/api/usage/sync": {
        post: {
          operationId: "usageSync",
          summary: "立即同步账本",
          description:
            "在后台开始同步当前账户的用量日志到本服务的账本（首次回填 LEDGER_BACKFILL_DAYS 天，之后从上次的终点继续，并回看一小时以收录站点迟写的日志）；" +
            "已在同步时不重复开始。立即返回开始时的状态，进度用 GET /api/usage/status 查看。",
          security: SESSION_SECURITY,
          responses: {
            "200": { description: "开始时的账本状态", content: json(ref("LedgerStatusSuccess")) },
            "401": UNAUTHORIZED,
            "403": FORBIDDEN,
            "500": INTERNAL,
            "503": UNAVAILABLE,
          },
        },
      },
      "/api/account/tokens": siteDataRoute(
        "accountTokens",
        "令牌",
        "账户在站点上的 API 令牌；密钥总是打码（前 4 位 + **** + 后 4 位）。",
        "TokensPageSuccess",
        PAGING,
      ),
      "/api/account/topups": siteDataRoute(
        "accountTopups",
        "充值记录",
        "新版 new-api 站点最近 30 天的充值订单；其他站点 supported 为 false（充值见使用日志的 topup 类型）。",
        "TopupsPageSuccess",
        PAGING,
      ),
    },
    components: {
      schemas: components(),
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "登录返回的 sessionToken：Authorization: Bearer <sessionToken>。同时携带 Cookie 时以此为准。",
        },
        cookieAuth: {
          type: "apiKey",
          in: "cookie",
          name: "gd_session",
          description: "浏览器会话 Cookie（HTTPS 下名为 __Host-gd_session）",
        },
        adminCookieAuth: {
          type: "apiKey",
          in: "cookie",
          name: "gd_admin",
          description:
            "管理员会话 Cookie（HTTPS 下名为 __Host-gd_admin）；管理员路由的 Bearer 为 /api/admin/login 返回的 token",
        },
      },
    },
  };
  return cached;
}
