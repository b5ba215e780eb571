/** The OpenAPI paths of the writes on an account's site (docs/design.md 20): redeem, check-in, 操作记录. */
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
  ref,
  siteDataFailures,
} from "./common";

export function actionRoute(
  operationId: string,
  summary: string,
  description: string,
  success: string,
  opts: { write?: boolean; body?: object; parameters?: object[]; failures?: Record<string, string> } = {},
) {
  return {
    operationId,
    summary,
    description,
    security: SESSION_SECURITY,
    parameters: [...(opts.parameters ?? []), ACCOUNT_PARAM],
    ...(opts.body ? { requestBody: { required: true, content: json(opts.body) } } : {}),
    responses: {
      "200": {
        description: "成功时 success 为 true；站点拒绝、失败或输入不对时 success 为 false，message 说明原因",
        content: json(
          { oneOf: [ref(success), ref("Failure")] },
          {
            ...siteDataFailures(),
            ...Object.fromEntries(Object.entries(opts.failures ?? {}).map(([k, m]) => [k, failureExample(m)])),
          },
        ),
      },
      "401": UNAUTHORIZED,
      ...(opts.write ? { "403": FORBIDDEN } : {}),
      "404": ACCOUNT_NOT_FOUND,
      "500": INTERNAL,
      "503": UNAVAILABLE,
    },
  };
}

export const WRITES =
  "每个账户每分钟至多 6 次写操作（兑换、签到、令牌的创建、修改与删除；查看密钥与读取不计），用完时说明几秒后可再试；" +
  "以 Cookie 认证的写请求须同源（CSRF 防护）。";

export function actionPaths(): Record<string, object> {
  return {
    "/api/account/redeem": {
      post: actionRoute(
        "accountRedeem",
        "兑换码充值",
        "在账户所在站点兑换一个兑换码，答复增加的额度；余额与账本随即更新。兑换码只发送一次（不重试），" +
          "不记录、不写入日志；操作记录中只有结果。新版 new-api 站点每 20 分钟只接受本服务地址 20 次兑换或查看密钥，" +
          `用完时不再发送并说明何时再试。${WRITES}`,
        "RedeemSuccess",
        {
          write: true,
          failures: {
            empty: "请填写兑换码",
            generic: "兑换失败：站点没有说明原因（兑换码无效、已被使用或已过期时，新版 new-api 都这样回答）",
            used: "兑换失败，该兑换码已被使用",
            compliance: "站点尚未开放兑换：需要站点管理员先在后台确认合规声明",
            critical: "站点限制每 20 分钟最多 20 次兑换或查看密钥，已用完，请约 7 分钟后再试",
            tooFast: "操作过于频繁：每个账户每分钟最多 6 次写操作，请 42 秒后再试",
          },
        },
      ),
    },
    "/api/account/checkin": {
      get: actionRoute(
        "accountCheckinStatus",
        "签到状态",
        "new-api（checkin）与 Veloera（check_in）站点的签到：今天是否已签到、站点是否开启签到、是否需要人机验证（需手动签到）、" +
          "本月的签到记录（new-api）。其他类型的站点答复 unsupported。",
        "CheckinStatusSuccess",
      ),
      post: actionRoute(
        "accountCheckin",
        "签到",
        "先读签到状态，今天未签到才签到；答复奖励的额度。站点要求 Turnstile 人机验证时答复 manual 与站点地址，不代为签到。" +
          WRITES,
        "CheckinResultSuccess",
        { write: true, failures: { tooFast: "操作过于频繁：每个账户每分钟最多 6 次写操作，请 42 秒后再试" } },
      ),
    },
    "/api/site/{path}": Object.fromEntries(
      (["get", "post", "put", "delete"] as const).map((method) => [
        method,
        {
          ...actionRoute(
            `siteProxy${method[0]!.toUpperCase()}${method.slice(1)}`,
            "代理站点的用户接口",
            "以该账户保存的访问令牌与用户头，把请求转发到账户所在站点的 /api/{path}，原样答复站点的 JSON（至多 1 MiB，不跟随重定向，" +
              "受站点请求预算限制）。只允许各类站点的用户接口：user/self、log/self、log/self/stat、token/（GET、POST、PUT）、" +
              "token/{id}（DELETE）、user/topup、user/topup/self、user/models、user/self/groups、pricing、user/available_models、" +
              "available_model、prices、user/checkin、user/check_in_status、user/check_in、status；路径须原样（小写、不含编码字符、" +
              "无 .. 或 //）。修改密码、重置访问令牌（GET user/token）、删除账户、两步验证、支付与管理接口一律拒绝。" +
              `写请求计入操作记录，${WRITES}`,
            "Failure",
            {
              write: method !== "get",
              parameters: [
                {
                  name: "path",
                  in: "path",
                  required: true,
                  description: "站点 /api/ 之后的路径，如 user/self、log/self",
                  schema: { type: "string" },
                },
              ],
              ...(method === "post" || method === "put"
                ? { body: { type: "object", description: "原样转发的 JSON（至多 64 KiB）" } }
                : {}),
              failures: {
                refused: "不允许代理：GET /api/user/token（不在允许的用户接口之列，或这类站点没有这个接口）",
              },
            },
          ),
        },
      ]),
    ),
    "/api/account/actions": {
      get: {
        ...actionRoute(
          "accountActions",
          "操作记录",
          "通过本服务对该账户做过的写操作（兑换、签到、令牌的修改与查看密钥），新的在前：时间、从哪里操作、站点的答复、增加的额度；从不含兑换码或密钥。" +
            "工作区只看到自己的与浏览器会话的记录。",
          "ActionRecordsSuccess",
        ),
      },
    },
    "/api/account/actions.csv": {
      get: {
        ...fileRoute("accountActionsCsv", "导出操作记录", "", "text/csv").get,
        description:
          "该账户的全部操作记录（保留一年），新的在前：时间 (UTC)、类型、结果、说明、额度、来源；" +
          "UTF-8 带 BOM、CRLF 换行、RFC 4180 引号规则，文字单元格以 = + - @ 开头时前加 '。从不含兑换码或密钥。",
      },
    },
  };
}
