import { MSG } from "../../core/messages";
import { INTERNAL, UNAUTHORIZED, UNAVAILABLE, WORKSPACE_SECURITY, failureExample, json, ref } from "./common";

const BAD_INPUT = "参数无效或被拒绝（名称、密码、标签等）时 success 为 false，message 说明原因";

const success = (data: object = {}) => ({
  type: "object",
  properties: { success: { const: true }, data },
  required: ["success"],
});
const done = { type: "object", properties: { success: { const: true } }, required: ["success"] };

/** A workspace route's answers: its success, a refusal in words as HTTP 200, and the common statuses. */
export function operation(
  operationId: string,
  summary: string,
  description: string,
  answer: object,
  extra: { body?: object; write?: boolean; notFound?: string; public?: boolean } = {},
) {
  return {
    operationId,
    summary,
    description,
    security: extra.public ? [] : WORKSPACE_SECURITY,
    ...(extra.body ? { requestBody: { required: true, content: json(extra.body) } } : {}),
    responses: {
      "200": { description: `成功；${BAD_INPUT}`, content: json({ oneOf: [answer, ref("Failure")] }) },
      ...(extra.public ? {} : { "401": UNAUTHORIZED }),
      ...(extra.write
        ? {
            "403": {
              description: "跨站的 Cookie 写请求（CSRF 防护），或只读 API 令牌的写请求",
              content: json(ref("Failure"), {
                badOrigin: failureExample(MSG.badOrigin),
                readOnly: failureExample("该 API 令牌只读，不能修改工作区"),
              }),
            },
          }
        : {}),
      ...(extra.notFound
        ? {
            "404": {
              description: extra.notFound,
              content: json(ref("Failure"), { notFound: failureExample(extra.notFound) }),
            },
          }
        : {}),
      "500": INTERNAL,
      "503": UNAVAILABLE,
    },
  };
}

/** An operation that also answers 413 (a backup file over 4 MiB). */
function withTooLarge(op: ReturnType<typeof operation>) {
  return {
    ...op,
    responses: {
      ...op.responses,
      "413": {
        description: "文件超过 4 MiB",
        content: json(ref("Failure"), { tooLarge: failureExample(MSG.bodyTooLarge) }),
      },
    },
  };
}

const signInResponses = (what: string) => ({
  "200": {
    description: `${what}成功：data.token 是工作区会话令牌（Bearer），浏览器另收到 HttpOnly 的 gd_workspace Cookie；${BAD_INPUT}`,
    content: json({ oneOf: [ref("WorkspaceSignedIn"), ref("Failure")] }),
  },
  "403": {
    description: "来自其他站点的浏览器请求",
    content: json(ref("Failure"), { badOrigin: failureExample(MSG.badOrigin) }),
  },
  "413": {
    description: "请求体超过 64 KiB",
    content: json(ref("Failure"), { tooLarge: failureExample(MSG.bodyTooLarge) }),
  },
  "429": {
    description: "尝试过于频繁（登录：按地址与工作区计数，单个地址锁不住工作区；创建：每个地址每小时 3 个）",
    headers: { "Retry-After": { description: "可以重试前的秒数", schema: { type: "integer", minimum: 1 } } },
    content: json(ref("Failure"), { rateLimited: failureExample(MSG.rateLimited) }),
  },
  "500": INTERNAL,
  "503": UNAVAILABLE,
});

/** The workspace's routes (docs/design.md 17): sign-in, its accounts, devices and API tokens. */
export function workspacePaths(): Record<string, object> {
  return {
    "/api/workspace/register": {
      post: {
        operationId: "workspaceRegister",
        summary: "创建工作区",
        description:
          "创建工作区并登录。管理员可设为仅凭邀请码创建（npm run sites -- signup invite），此时 invite 必填。",
        security: [],
        responses: signInResponses("创建"),
      },
    },
    "/api/workspace/login": {
      post: {
        operationId: "workspaceLogin",
        summary: "登录工作区",
        description:
          "名称或密码错误时为 HTTP 401「工作区名称或密码错误」（不区分是哪一个错）。会话闲置 30 天结束，最长 90 天。",
        security: [],
        responses: {
          ...signInResponses("登录"),
          "401": {
            description: "名称或密码错误，或两步验证码缺少、错误或已使用",
            content: json(ref("Failure"), {
              wrong: failureExample("工作区名称或密码错误"),
              totpRequired: failureExample("该工作区已开启两步验证，请输入验证器中的 6 位验证码或一个恢复码"),
              totpWrong: failureExample("两步验证码错误或已使用"),
            }),
          },
        },
      },
    },
    "/api/workspace/logout": {
      post: operation("workspaceLogout", "退出工作区", "结束本设备的工作区会话并清除 Cookie。", done, { write: true }),
    },
    "/api/workspace/me": {
      get: operation(
        "workspaceMe",
        "当前工作区",
        "工作区名称、会话类型（设备或 API 令牌）与账户数。",
        ref("WorkspaceMe"),
      ),
    },
    "/api/workspace/accounts": {
      get: operation(
        "workspaceAccounts",
        "工作区的账户",
        "置顶的在前，其余按设定的顺序；从不返回访问令牌。state：ok 正常；reauth 站点拒绝了保存的令牌，需要用 PATCH 提供新令牌；site_removed 站点已移除。",
        ref("WorkspaceAccounts"),
      ),
      post: operation(
        "workspaceAddAccount",
        "保存账户",
        "先以与登录相同的方式向站点验证（GET /api/user/self），站点拒绝时 success 为 false，message 是站点自己的原因；" +
          "通过后访问令牌以 AES-256-GCM 密封保存，此后由服务自动续期会话。工作区已保存的同一账户不做任何修改并说明" +
          "（换令牌用 PATCH 的 accessToken，即重新授权）。最多 200 个账户。",
        ref("WorkspaceAccountAnswer"),
        { write: true },
      ),
    },
    "/api/workspace/accounts/{id}": {
      patch: operation(
        "workspaceUpdateAccount",
        "修改账户",
        "别名、标签、置顶、不计入合计、自动签到、顺序；带 accessToken 时先经站点验证再替换保存的令牌（需要重新授权的账户由此恢复，历史不丢）。",
        ref("WorkspaceAccountAnswer"),
        {
          write: true,
          notFound: "工作区中没有这个账户",
        },
      ),
      delete: operation(
        "workspaceRemoveAccount",
        "移除账户",
        "删除保存的令牌与其会话；?ledger=1 时也删除账本（其他工作区仍保存该账户时保留，并在 note 中说明）。",
        success({
          type: "object",
          properties: {
            ledgerDeleted: { type: "boolean" },
            entries: { type: "integer" },
            note: { type: ["string", "null"] },
          },
        }),
        {
          write: true,
          notFound: "工作区中没有这个账户",
        },
      ),
    },
    "/api/workspace/import": {
      post: withTooLarge({
        ...operation(
          "workspaceImport",
          "导入账户",
          "请求体就是 All API Hub（V1、V2 完整或仅账户）或 metapi 导出的 JSON 备份文件（最大 4 MiB）。每个账户按站点地址匹配已注册的站点，" +
            "先经站点验证再保存，保留别名、标签、置顶、不计入合计与顺序；data.outcomes 逐个说明结果（saved、updated、unregistered、refused、skipped），从不返回令牌。" +
            "无法识别的文件：success 为 false，「无法识别的备份文件：请选择 All API Hub 或 metapi 导出的 JSON 文件」。",
          success(ref("WorkspaceImportResult")),
          { write: true, body: { type: "object", description: "备份文件" } },
        ),
      }),
    },
    "/api/workspace/accounts/export": {
      get: {
        operationId: "workspaceExport",
        summary: "导出账户列表",
        description:
          "工作区的账户列表（不含任何令牌）：默认 JSON，?format=csv 为 CSV（UTF-8 带 BOM，Excel 可直接打开）。",
        security: WORKSPACE_SECURITY,
        responses: {
          "200": {
            description: "文件（Content-Disposition: attachment）",
            content: {
              "application/json": { schema: { type: "object" } },
              "text/csv": { schema: { type: "string" } },
            },
          },
          "401": UNAUTHORIZED,
          "500": INTERNAL,
          "503": UNAVAILABLE,
        },
      },
    },
  };
}
