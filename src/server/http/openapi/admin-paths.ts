import { MSG } from "../../core/messages";
import {
  ADMIN_SECURITY,
  FORBIDDEN,
  INTERNAL,
  UNAUTHORIZED,
  UNAVAILABLE,
  adminOperation,
  failureExample,
  json,
  ref,
} from "./common";

/** The operator's routes: sign-in, the sites and the audit log. */
export function adminPaths(): Record<string, object> {
  return {
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
      ),
      post: adminOperation(
        "adminAddSite",
        "添加站点",
        "先校验地址（http/https，不含用户名密码与 # 片段）并探测 GET /api/status，答复中带探测结果（类型、版本、系统名、quota_per_unit）。" +
          "站点无法访问时答复 needsConfirmation，除非 confirmUnreachable 为 true。",
      ),
    },
    "/api/admin/sites/{id}": {
      patch: adminOperation(
        "adminEditSite",
        "修改站点",
        "修改名称、地址（新地址先探测，规则同添加）或每分钟请求预算（null 为默认值）。" +
          "地址一变，在旧地址登录的会话全部结束（访问令牌只发往用户登录时的地址），用户需在新地址重新登录；" +
          "账本另行保存、新地址的用户无法读取，除非 sameGateway 为 true 且探测确认是同一网关。答复的 move 说明结束的会话数与账本去向。",
      ),
      delete: adminOperation(
        "adminRemoveSite",
        "移除站点",
        "不带 confirm=1 时不移除，只答复该站点的有效会话数；带 confirm=1 时移除。移除后这些会话照常可用（me 不再带 site）。",
      ),
    },
    "/api/admin/sites/{id}/probe": {
      post: adminOperation(
        "adminProbeSite",
        "立即探测",
        "立即探测该站点的 /api/status，保存类型、货币设置与健康状况。",
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
        responses: {
          "200": {
            description:
              "审计日志的一页；参数无效时为失败答复（说明哪个参数、为什么，如「每页条数超出范围（参数 limit）」）",
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
  };
}
