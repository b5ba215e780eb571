/** The OpenAPI paths of managing an account's API keys on its site (docs/design.md 20). */
import { actionRoute, WRITES } from "./action-paths";

/** DELETE …/tokens/{id} makes its input of the path (a list of one): its parameter is written here. */
const ID = {
  name: "id",
  in: "path",
  required: true,
  description: "令牌编号（站点的 id，见令牌列表）",
  schema: { type: "integer", minimum: 1 },
};

const FORM = {
  name: "请填写令牌名称",
  long: "令牌名称太长：这个站点最多 30 字节（约 10 个汉字），现在是 33 字节",
  ip: "「10.0.0.300」不是 IP 地址或网段（如 203.0.113.7 或 10.0.0.0/8）",
  expired: "过期时间应晚于现在",
};

export function tokenPaths(): Record<string, object> {
  return {
    "/api/account/tokens": {
      post: actionRoute(
        "accountTokenCreate",
        "创建令牌",
        "在账户所在站点创建一个 API 令牌。先按站点类型的规则检查（名称字节数、额度范围、IP 与网段），不合规时不发送。" +
          "站点不答复新令牌时（new-api、Veloera、one-hub），按名称在最新的令牌中找到它，答复其编号；完整密钥须另行查看。" +
          WRITES,
        "TokenWriteSuccess",
        {
          write: true,
          failures: { ...FORM, tooFast: "操作过于频繁：每个账户每分钟最多 6 次写操作，请 42 秒后再试" },
        },
      ),
    },
    "/api/account/tokens/rules": {
      get: actionRoute(
        "accountTokenRules",
        "令牌规则",
        "账户所在站点的令牌规则（名称字节数、额度上限、能否指定分组、批量删除、是否永久删除），" +
          "以及新版 new-api 每 20 分钟 20 次兑换或查看密钥的剩余次数。",
        "TokenRulesSuccess",
      ),
    },
    "/api/account/tokens/{id}": {
      patch: actionRoute(
        "accountTokenUpdate",
        "修改令牌",
        "只改给出的字段：先从站点读出令牌，改动后把全部字段发回（各类站点的修改都是整体替换，缺少的字段会被清空，" +
          "缺少过期时间会让令牌立即过期）。" +
          WRITES,
        "TokenWriteSuccess",
        {
          write: true,
          failures: { ...FORM, missing: "站点上没有这个令牌（可能已被删除）" },
        },
      ),
      delete: actionRoute(
        "accountTokenDelete",
        "删除令牌",
        "删除一个令牌。one-api 的删除不可恢复（答复的 permanent 为 true），其他站点把它移出列表。" + WRITES,
        "TokenDeleteSuccess",
        { write: true, parameters: [ID] },
      ),
    },
    "/api/account/tokens/{id}/status": {
      post: actionRoute(
        "accountTokenStatus",
        "启用或停用令牌",
        "只改令牌的状态。已过期或额度用尽的令牌，站点拒绝启用并说明原因（先修改过期时间或额度）。" + WRITES,
        "TokenWriteSuccess",
        {
          write: true,
          failures: { expired: "令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期" },
        },
      ),
    },
    "/api/account/tokens/{id}/key": {
      post: actionRoute(
        "accountTokenReveal",
        "查看完整密钥",
        "答复令牌的完整密钥（带 sk- 前缀）与导入客户端的配置：Cherry Studio 与 CC Switch 的一键导入链接、.env 片段。" +
          "本服务不保存、不缓存、不记录密钥，答复带 Cache-Control: no-store；操作记录只记下查看过。" +
          "新版 new-api 每次查看计入站点每 20 分钟 20 次的限制（与兑换共用），用完时不再发送并说明何时再试。" +
          WRITES,
        "RevealedKeySuccess",
        {
          write: true,
          failures: {
            critical: "站点限制每 20 分钟最多 20 次兑换或查看密钥，已用完，请约 7 分钟后再试",
            masked: "站点没有给出完整密钥",
          },
        },
      ),
    },
    "/api/account/tokens/delete": {
      post: actionRoute(
        "accountTokenBatchDelete",
        "批量删除令牌",
        "一次删除多个令牌（至多 100 个）：新版 new-api 一次请求，其他站点逐个删除；没能删除的逐个说明原因。" + WRITES,
        "TokenDeleteSuccess",
        { write: true },
      ),
    },
  };
}
