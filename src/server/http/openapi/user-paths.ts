import { MSG } from "../../core/messages";
import { MAX_RANGE_DAYS } from "../../../shared/ranges";
import {
  ACCOUNT_NOT_FOUND,
  ACCOUNT_PARAM,
  FORBIDDEN,
  INTERNAL,
  SESSION_SECURITY,
  UNAUTHORIZED,
  UNAVAILABLE,
  failureExample,
  fileRoute,
  json,
  ledgerRoute,
  loginExamples,
  ref,
  siteDataRoute,
} from "./common";

/** The routes of a signed-in account: sign-in, live site data, the ledger and the exports. */
export function userPaths(): Record<string, object> {
  return {
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
        description: "返回登录时的用户信息快照（不再访问站点）与站点注册表中的当前站点；站点已被删除时没有 site 字段。",
        security: SESSION_SECURITY,
        parameters: [ACCOUNT_PARAM],
        responses: {
          "200": { description: "会话信息", content: json(ref("MeSuccess")) },
          "401": UNAUTHORIZED,
          "404": ACCOUNT_NOT_FOUND,
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
    ),
    "/api/account/logs": siteDataRoute(
      "accountLogs",
      "使用日志",
      `按时间倒序分页；可按类型、模型、令牌名与时间范围（最长 ${MAX_RANGE_DAYS} 天）筛选。`,
      "LogsPageSuccess",
    ),
    "/api/accounts/overview": siteDataRoute(
      "accountsOverview",
      "全部账户概览",
      "本浏览器（Cookie）中的每个账户各一行：实时余额、今日消费与请求数、状态（正常、站点无法访问、令牌被拒绝、会话已过期），" +
        "以及折合美元的合计。各站点并行读取，一个站点挂起或失败只影响它自己那一行（最多等待 SITE_TIMEOUT_MS）。" +
        "以 Bearer 令牌调用时只有该令牌的账户一行。以工作区会话调用时为工作区的每个账户一行（带 saved 字段：别名、标签、状态），" +
        "需要重新授权或站点已移除的账户显示账本最近一次记下的余额；标记为不计入合计的账户不计入 totals。",
      "AccountsOverviewSuccess",
    ),
    "/api/usage/status": {
      get: {
        operationId: "usageStatus",
        summary: "账本同步状态",
        description: "当前账户的用量账本：条数、已覆盖的时间范围、是否正在同步及进度、上次错误。",
        security: SESSION_SECURITY,
        parameters: [ACCOUNT_PARAM],
        responses: {
          "200": { description: "账本状态", content: json(ref("LedgerStatusSuccess")) },
          "401": UNAUTHORIZED,
          "404": ACCOUNT_NOT_FOUND,
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
    ),
    "/api/usage/balance": ledgerRoute(
      "usageBalance",
      "余额走势",
      "每次同步时记录的站点余额（范围内每天最后一次），最近 7 天的日均消费（美元），以及按此速度余额还能用的天数。",
      "UsageBalanceSuccess",
    ),
    "/api/export/count": ledgerRoute(
      "exportCount",
      "导出行数",
      "CSV 导出（同样的参数）将包含的行数与文件名，供下载前显示。",
      "ExportCountSuccess",
    ),
    "/api/export/usage.csv": fileRoute(
      "exportUsageCsv",
      "导出 CSV",
      "账本中的日志逐行导出为 CSV：UTF-8 带 BOM、CRLF 换行、RFC 4180 引号规则（Excel 与 WPS 可直接打开）；" +
        "以 = + - @ 制表符或回车开头的文字单元格前加 ' 以防公式注入（数字不变）。" +
        "列：时间（tz 时区）、站点、用户、类型、模型、令牌、输入 tokens、输出 tokens、额度、金额 (USD)、耗时 (ms)、流式、说明。" +
        `边读边发：内存不随导出大小增长，客户端断开即停止读取。范围最长 ${MAX_RANGE_DAYS} 天。`,
      "text/csv",
    ),
    "/api/export/reconciliation.csv": fileRoute(
      "exportReconciliationCsv",
      "导出对账 CSV",
      "对账单独成一个文件：每个账户在范围内的每一天一行，列为日期、站点、用户、起始与结束余额快照（ISO 时间）、余额变化、消费、充值、" +
        "签到奖励、退款（美元）、无金额的调整条数、日志应有的变化（−消费 + 充值 + 签到奖励 + 退款）、差额、不符（是 / 否 / 快照不足）。" +
        "差额超过 $0.01 或当天消费的 1% 为「是」。UTF-8 带 BOM、CRLF 换行。",
      "text/csv",
    ),
    "/api/export/statement.pdf": fileRoute(
      "exportStatementPdf",
      "月度对账单 PDF",
      "某月的 A4 对账单：每个账户的站点与用户、当月消费（美元与站点货币）、期初与期末余额（有同步记录时）、按模型与按令牌的消费表、" +
        "每日消费图、充值，以及生成时间与账本覆盖范围（未完全同步的月份会注明）；多个账户时首页为汇总。中文以文字嵌入，可搜索、可复制。" +
        "按模型与按令牌的表只列最大的 29 行，其余合为「其他（N 项）」。每个实例同时生成 2 份、排队 4 份，" +
        "再多时答复 HTTP 503（对账单生成繁忙，请稍后再试）并带 Retry-After。",
      "application/pdf",
    ),
    "/api/usage/sync": {
      post: {
        operationId: "usageSync",
        summary: "立即同步账本",
        description:
          "在后台开始同步当前账户的用量日志到本服务的账本（首次回填 LEDGER_BACKFILL_DAYS 天，之后从上次的终点继续，并回看一小时以收录站点迟写的日志）；" +
          "已在同步时不重复开始。立即返回开始时的状态，进度用 GET /api/usage/status 查看。",
        security: SESSION_SECURITY,
        parameters: [ACCOUNT_PARAM],
        responses: {
          "200": { description: "开始时的账本状态", content: json(ref("LedgerStatusSuccess")) },
          "401": UNAUTHORIZED,
          "404": ACCOUNT_NOT_FOUND,
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
    ),
    "/api/account/topups": siteDataRoute(
      "accountTopups",
      "充值记录",
      "新版 new-api 站点最近 30 天的充值订单；其他站点 supported 为 false（充值见使用日志的 topup 类型）。",
      "TopupsPageSuccess",
    ),
  };
}
