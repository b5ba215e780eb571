/** The usage log's entry types, and their names as the dashboard and the exports show them. */
export const LOG_TYPES = ["topup", "consume", "manage", "system", "error", "refund", "other"] as const;
export type LogType = (typeof LOG_TYPES)[number];

export const LOG_TYPE_NAMES: Record<LogType, string> = {
  consume: "消费",
  topup: "充值",
  manage: "管理",
  system: "系统",
  error: "错误",
  refund: "退款",
  other: "其他",
};

/** A type's name; one a site invented is shown as it came. */
export const logTypeName = (type: string): string => LOG_TYPE_NAMES[type as LogType] ?? type;
