import { z } from "zod";
import { MSG } from "../../core/messages";

/**
 * Parameter schemas shared by the procedures. Parameters arrive as JSON (tRPC) or as query strings
 * (REST), so numbers and flags accept both; an empty value counts as absent. No `preprocess`: the
 * client's input types are inferred from these.
 */

/** Optional; "" and null are absent. */
export const optionalParam = <T extends z.ZodType>(schema: T) =>
  z
    .union([z.literal(""), z.null(), schema])
    .optional()
    .transform((v) => (v === "" || v === null ? undefined : (v as z.output<T>)));

/** An integer, from a number or its decimal string. */
export const intParam = (min: number, max: number) =>
  z
    .union([
      z.number(),
      z
        .string()
        .regex(/^\d{1,9}$/)
        .transform(Number),
    ])
    .pipe(z.number().int().min(min).max(max));

/** An integer with its default when absent. */
export const intWithDefault = (min: number, max: number, fallback: number) =>
  optionalParam(intParam(min, max)).transform((v) => v ?? fallback);

/** A page of a listing, from 1. */
export const pageParam = intWithDefault(1, 10_000, 1).meta({ description: "页码，从 1 开始（默认 1）" });

/** Rows per page of a listing. */
export const pageSizeParam = intWithDefault(1, 100, 20).meta({
  description: "每页条数（默认 20），各类站点含义相同（one-api 站点每页固定 10 条，更大的页由本服务连续读取多页拼成）",
});

/** A yes/no: true/false, or "1"/"0"/"true"/"false" in a query string. */
export const flag = optionalParam(
  z.union([z.boolean(), z.enum(["1", "0", "true", "false"])]).transform((v) => v === true || v === "1" || v === "true"),
);

/** A name to filter by. */
export const nameParam = optionalParam(z.string().trim().min(1).max(128));

/** One of `values`, with its default when absent. */
export const choice = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  optionalParam(z.enum(values)).transform((v) => v ?? fallback);

/** What a person calls each parameter a form or a link may carry. */
const LABELS: Record<string, string> = {
  accessToken: "访问令牌",
  userId: "用户ID",
  siteId: "站点",
  alias: "别名",
  tags: "标签",
  from: "开始日期",
  to: "结束日期",
  tz: "时区",
  page: "页码",
  pageSize: "每页条数",
  type: "日志类型",
  model: "模型",
  token: "令牌名",
  accounts: "账户范围",
  groupBy: "分组方式",
  split: "拆分方式",
  month: "月份",
  refresh: "刷新参数",
  code: "兑换码",
  name: "名称",
  url: "地址",
  password: "密码",
  current: "当前密码",
  next: "新密码",
  threshold: "阈值",
  channels: "通知渠道",
  time: "发送时间",
  weekday: "星期",
  timeZone: "时区",
  limit: "每页条数",
  before: "起点",
  actions: "操作类型",
  state: "状态",
  kind: "规则类型",
  account: "账户",
  cadence: "周期",
  format: "格式",
  ledger: "账本选项",
  confirm: "确认",
  ids: "令牌编号",
  id: "编号",
  enabled: "启用状态",
  unlimited: "无限额度",
  remainQuota: "额度",
  expiresAt: "过期时间",
  models: "模型",
  allowIps: "IP 白名单",
  group: "分组",
  invite: "邀请码",
  totp: "验证码",
  secret: "密钥",
  botToken: "机器人令牌",
  chatId: "会话 ID",
  requestsPerMinute: "每分钟请求预算",
  sameGateway: "同一网关",
  confirmUnreachable: "确认",
  order: "顺序",
  pinned: "置顶",
  excluded: "不计入合计",
  autoCheckin: "自动签到",
  key: "账户标识",
  method: "请求方法",
  path: "路径",
  access: "权限",
  step: "提醒幅度",
  remind: "每日提醒",
  muted: "暂停",
  file: "备份文件",
};

/** Why the parameter was refused, in words: the check's own where it says one (zod's own are English). */
function problemOf(issue: z.core.$ZodIssue, label: string): string {
  if (/[\u4e00-\u9fff]/.test(issue.message)) return issue.message;
  if (issue.code === "invalid_type" && issue.input === undefined) return `请填写${label}`;
  if (issue.code === "too_small" && issue.origin === "string" && Number(issue.minimum) <= 1) return `请填写${label}`;
  if (issue.code === "too_big") return issue.origin === "string" ? `${label}太长` : `${label}超出范围`;
  if (issue.code === "too_small") return `${label}超出范围`;
  return `${label}无效`;
}

/**
 * What was wrong with a value one of several shapes may take: the issue of the shape it was
 * meant as (a value too long rather than "not empty, not null"), else the issue itself.
 */
function specific(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union") return issue;
  const vague = new Set(["invalid_type", "invalid_value", "invalid_union"]);
  for (const branch of issue.errors) {
    for (const inner of branch) {
      const found = specific(inner);
      if (!vague.has(found.code)) return found;
    }
  }
  return issue;
}

/**
 * The first bad parameter of a failed parse, as the answer's message: a sentence naming the field
 * as a person knows it, and the parameter's own name for programs (`结束日期不能早于开始日期（参数 to）`).
 */
export function badParamMessage(error: z.ZodError): string {
  const issue = error.issues[0];
  const param = issue && issue.path.length > 0 ? String(issue.path[0]) : null;
  if (!issue || param === null) return MSG.badInput;
  return `${problemOf(specific(issue), LABELS[param] ?? param)}（参数 ${param}）`;
}
