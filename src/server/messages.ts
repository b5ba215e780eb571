/** Every message the service answers with, byte for byte as the contract states them. */
export const MSG = {
  incomplete: "请填写完整信息",
  siteNotFound: "站点不存在",
  authFailed: "认证失败，请检查用户ID和令牌",
  userMismatch: "用户ID与令牌不匹配",
  siteUnreachablePrefix: "无法连接站点: ",
  unauthenticated: "未登录或登录已过期",
  bodyNotObject: "请求体必须是 JSON 对象",
  bodyTooLarge: "请求体过大",
  badOrigin: "非法的请求来源",
  rateLimited: "登录尝试过于频繁，请稍后再试",
  internal: "服务器内部错误，请稍后再试",
  dbUnavailable: "数据库暂时不可用，请稍后再试",
  notFound: "接口不存在",
  methodNotAllowed: "不支持的请求方法",
} as const;

export type Failure = { success: false; message: string };

export function failure(message: string): Failure {
  return { success: false, message };
}
