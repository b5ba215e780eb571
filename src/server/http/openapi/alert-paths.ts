/** The OpenAPI paths of 提醒 (docs/design.md 21): channels, rules and the alerts of a workspace. */
import { ref } from "./common";
import { operation } from "./workspace-paths";

const SIGNED =
  "Webhook 投递为 JSON POST：event（opened、reminder、escalated、resolved；测试为 test；摘要为 digest）、alert、rule、account；" +
  "请求头 X-GD-Timestamp 为 Unix 秒，X-GD-Signature 为 sha256=<hex>，即以渠道密钥对「时间戳.原始请求体」做 HMAC-SHA256；" +
  "校验签名并拒绝过旧的时间戳以防重放。";

export function alertPaths(): Record<string, object> {
  return {
    "/api/alerts": {
      get: operation(
        "alertsList",
        "提醒",
        "工作区的提醒：打开的在前，已恢复的按时间倒序，各带投递记录（渠道、事件、状态、重试次数、原因）。" +
          "条件须连续两次评估成立才打开（避免抖动），打开时发送一次，持续期间不再发送（可选每日提醒），" +
          "加重超过规则的幅度时再发一次，连续两次评估不成立时发送「已恢复」。",
        ref("AlertsSuccess"),
      ),
    },
    "/api/alerts/channels": {
      get: operation("alertChannels", "通知渠道", "工作区的通知渠道；从不答复密钥。", ref("AlertChannelsSuccess")),
      post: operation(
        "alertChannelCreate",
        "添加通知渠道",
        "类型：webhook {url, secret?}、email {to}（经运营方的 SMTP_URL）、telegram {botToken, chatId}、ntfy {url, token?}、" +
          "wecom 企业微信 / dingtalk 钉钉 / feishu 飞书 {url 或 token, secret?}（可直接粘贴机器人的 Webhook 地址；" +
          "消息发往运营方设置的服务地址）。webhook 与 ntfy 的地址解析到本机、内网或保留地址时拒绝" +
          "（运营方设置 ALERT_ALLOW_PRIVATE=1 时允许）；不跟随重定向，5 秒超时。设置加密保存，答复中只有不含密钥的 target；" +
          "webhook 的签名密钥只在创建时答复一次。" +
          SIGNED,
        ref("AlertChannelCreatedSuccess"),
        { write: true },
      ),
    },
    "/api/alerts/channels/{id}": {
      delete: operation(
        "alertChannelRemove",
        "删除通知渠道",
        "删除后，未送达的投递失败。",
        ref("AlertRemovedSuccess"),
        { write: true },
      ),
    },
    "/api/alerts/channels/{id}/test": {
      post: operation(
        "alertChannelTest",
        "测试通知渠道",
        "立即发送一条测试消息（event 为 test），答复是否送达或原因（如 连接被拒绝、对方答复 HTTP 500）。",
        ref("AlertChannelTestSuccess"),
        { write: true },
      ),
    },
    "/api/alerts/rules": {
      get: operation(
        "alertRules",
        "提醒规则",
        "工作区的规则与计算「今日」的时区。新工作区默认有三条：余额按近 7 天消费不足 3 天、站点拒绝令牌、站点 30 分钟无法访问。",
        ref("AlertRulesSuccess"),
      ),
      post: operation(
        "alertRuleCreate",
        "添加提醒规则",
        "kind：balance_below（余额低于，美元）、days_left_below（按近 7 天消费可用天数少于）、spend_today_above（今日消费超过，美元）、" +
          "token_refused（站点拒绝令牌）、site_down（站点无法访问超过 N 分钟）、checkin_failed（自动签到失败或需手动签到）、" +
          "unmatched_move（对账差额超过，美元）、spend_spike（今日到此刻的消费超过近 7 天同一时刻中位数的倍数）、" +
          "price_changed（近 7 天用过的模型在其站点 24 小时内涨价超过的百分比，或已下架）、" +
          "overcharged_above（近 24 小时扣费高于日志倍率或站点价目表的金额超过，美元，见 核对）、" +
          "overcharged_share_above（近 24 小时多扣占消费的百分比超过）、plan_ending_within（生效中的套餐在 N 天内到期）、" +
          "plan_used_above（套餐本周期已用超过的百分比）；" +
          "account 为工作区账户编号或 all。",
        ref("AlertRuleSuccess"),
        { write: true },
      ),
    },
    "/api/alerts/rules/{id}": {
      patch: operation("alertRuleUpdate", "修改提醒规则", "只改给出的字段。", ref("AlertRuleSuccess"), { write: true }),
      delete: operation(
        "alertRuleRemove",
        "删除提醒规则",
        "它打开的提醒随之结束（不再发送），历史保留。",
        ref("AlertRemovedSuccess"),
        { write: true },
      ),
    },
    "/api/alerts/reconciliation": {
      get: operation(
        "alertReconciliation",
        "对账",
        "一个工作区账户每天的余额变化（当天第一个与最后一个余额快照之间）与日志能解释的变化（−消费 + 充值 + 签到奖励 + 退款）之差；" +
          "差额超过 $0.01 或当天消费的 1% 时 flagged（日志中没有的扣费、没记入日志的充值、站点统计错误）。" +
          "日志中充值与签到的额度写在文字里的站点，从文字读出。一次至多 92 天。",
        ref("ReconciliationSuccess"),
      ),
    },
    "/api/alerts/settings": {
      patch: operation(
        "alertSettings",
        "提醒设置",
        "计算「今日消费」所用的时区（IANA 名称，如 Asia/Shanghai；默认 Asia/Shanghai）。",
        ref("AlertTimeZoneSuccess"),
        { write: true },
      ),
    },
    "/api/alerts/digests": {
      get: operation(
        "alertDigests",
        "摘要",
        "工作区的摘要（每个周期一个）与其时刻所在的时区（提醒设置的时区）。",
        ref("AlertDigestsSuccess"),
      ),
      post: operation(
        "alertDigestSet",
        "设置摘要",
        "按周期设置（已有则修改）：daily 每天在 time 发送前一天的摘要；weekly 每周 weekday（1 周一 … 7 周日）在 time 发送前 7 天；" +
          "monthly 每月 1 日在 time 发送上个月，并带月度对账单（email 为 PDF 附件，其他渠道为 7 天内有效、只能下载一次的链接）。" +
          "内容：各账户与各模型的消费及与上一周期的对比、余额与按近 7 天消费可用的天数、未恢复的提醒、自动签到结果；" +
          "各渠道以其能显示的格式发送（企业微信、钉钉为 Markdown），Webhook 收到 event 为 digest 的 JSON（digest.title、text、markdown、figures）。" +
          "每个时段只发送一次（多实例时也是）；设置时已过的时段不补发。链接指向 PUBLIC_URL，未设置时为设置摘要时访问的地址。",
        ref("AlertDigestSuccess"),
        { write: true },
      ),
    },
    "/api/alerts/digests/{id}": {
      delete: operation("alertDigestRemove", "删除摘要", "不再发送这个周期的摘要。", ref("AlertRemovedSuccess"), {
        write: true,
      }),
    },
    "/api/alerts/digests/{id}/send": {
      post: operation(
        "alertDigestSend",
        "立即发送摘要",
        "把工作区时区中今天之前最近一个完整时段（每天：昨天；每周：今天之前 7 天；每月：上个月）的摘要立即放入发送队列（用来预览），与摘要设定的时刻无关；不改变按时发送。",
        ref("AlertDigestSentSuccess"),
        { write: true },
      ),
    },
    "/api/alerts/statement/{token}": {
      get: {
        operationId: "alertStatementByLink",
        summary: "通过一次性链接下载对账单",
        description:
          "月度摘要中的链接（/statement/{token} 页面上的下载按钮）指向这里：工作区全部账户该月的 PDF 对账单。" +
          "无需登录，链接本身即凭据；只能下载一次，7 天内有效。用过、过期或无效时答复 success:false 与原因。",
        security: [],
        responses: {
          "200": {
            description: "PDF 文件；或 success:false 与原因（链接已用过、已过期、无效）",
            content: {
              "application/pdf": { schema: { type: "string", format: "binary" } },
              "application/json": { schema: ref("Failure") },
            },
          },
        },
      },
    },
  };
}
