import { z } from "zod";

/** The service's own messages, byte for byte as the contract and docs/design.md state them. */
export const MSG = {
  incomplete: "请填写完整信息",
  siteNotFound: "站点不存在",
  authFailed: "认证失败，请检查用户ID和令牌",
  userMismatch: "用户ID与令牌不匹配",
  siteUnreachablePrefix: "无法连接站点: ",
  unauthenticated: "未登录或登录已过期",
  bodyNotObject: "请求体必须是 JSON 对象",
  bodyTooLarge: "请求体过大",
  bodiesBusy: "同时上传的文件过多，请稍后再试",
  noSuchRoute: "没有这个接口",
  methodNotAllowedPrefix: "这个接口不支持该请求方法，可用: ",
  badOrigin: "非法的请求来源",
  rateLimited: "登录尝试过于频繁，请稍后再试",
  internal: "服务器内部错误，请稍后再试",
  dbUnavailable: "数据库暂时不可用，请稍后再试",
  storageFull: "存储空间不足，请联系管理员释放磁盘空间",
  batchTooLarge: "一次请求包含的调用过多",
  badInput: "请求参数无效",
  siteRefused: "站点拒绝了访问令牌，请重新登录",
  pageAccountGone: "此页面所属的账户已不在本浏览器中（已退出或已过期），请刷新页面",
  siteFailedPrefix: "站点请求失败: ",
  siteBusy: "站点繁忙，请稍后再试",
  siteRemoved: "登录时所用的站点已被移除",
  firstSync: "首次同步中：余额是站点在添加账户时报告的，今日消费在首次同步后显示",
  syncFailed: "同步失败，请稍后再试",
  statementBusy: "对账单生成繁忙，请稍后再试",
  syncRunning: "该账户正在同步",
  syncLeaseLost: "同步被另一实例接手，本次已停止",
} as const;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** A live read refused for now, saying when to try again. */
export const BUSY = {
  /** The site's budget here is spent (or the site asked for quiet) for `ms` more. */
  site: (ms: number) => `站点繁忙，请约 ${seconds(ms)} 秒后再试`,
  /** The account used its share of the site's budget this minute while others want it. */
  account: (now = Date.now()) => `该账户的站点请求过于频繁，请 ${seconds(60_000 - (now % 60_000))} 秒后再试`,
};

export const failureSchema = z
  .object({ success: z.literal(false), message: z.string() })
  .meta({ id: "Failure", description: "失败：以 message 区分原因（无错误码字段）" });

export type Failure = z.infer<typeof failureSchema>;

/** A change that has nothing more to say than that it was made. */
export const doneSchema = z.object({ success: z.literal(true) });

/** `{success:true,data}` around an answer. */
export const successOf = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

/** An answer, or a failure the caller is told about as `{success:false,message}`. */
export const orFailure = <T extends z.ZodType>(answer: T) => z.union([answer, failureSchema]);

export function failure(message: string): Failure {
  return { success: false, message };
}
