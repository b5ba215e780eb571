/** The usage log's entry types, and their names as the dashboard and the exports show them. */
import { moneyOf, quotaOf, saneQuota } from "./bounds";

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

/**
 * The quota a top-up entry added: its own when the site wrote one, else the amount its text names
 * (new-api writes a redeemed code's or a payment's amount only into the text, with quota 0:
 * "通过兑换码充值 ＄10.000000 额度", "使用在线充值成功，充值金额: 5000000 点额度，支付金额：73"). Null
 * when neither says, or when what it says is outside the bounds (docs/design.md 29): unknown.
 */
export function topupQuota(quota: number, content: string, quotaPerUnit: number): number | null {
  if (quota !== 0) return saneQuota(quota) ? quota : null;
  const usd = /[＄$]\s*(\d[\d,]*(?:\.\d+)?)\s*额度/.exec(content);
  if (usd?.[1]) {
    const amount = moneyOf(usd[1].replace(/,/g, ""));
    const q = amount === null ? null : Math.round(amount * quotaPerUnit);
    return q !== null && saneQuota(q) ? q : null;
  }
  const points = /(\d[\d,]*)\s*点额度/.exec(content);
  if (points?.[1]) return quotaOf(points[1].replace(/,/g, ""));
  return null;
}

/**
 * A plan bought (new-api's subscription purchase, logged as a top-up): from the wallet, the quota it
 * took ("使用余额购买订阅成功，套餐: Pro，支付金额: 9.90，扣除额度: 4950000"); paid outside the site
 * ("订阅购买成功，套餐: Pro，支付金额: 9.90，支付方式: stripe"), 0: the wallet did not move. Null for
 * any other entry.
 */
export function planPurchaseQuota(content: string): number | null {
  const fromWallet = /购买订阅成功.*扣除额度[:：]\s*(\d+)/.exec(content);
  if (fromWallet?.[1]) return quotaOf(fromWallet[1]);
  return /订阅购买成功|购买订阅成功/.test(content) ? 0 : null;
}
