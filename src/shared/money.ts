/** Money as every page, export and statement writes it: one rule for the decimals, one sign each. */

/** How a site shows money (its `/api/status` settings, as the summary reports them). */
export type MoneySettings = {
  quotaPerUnit: number;
  display: "USD" | "CNY" | "CUSTOM" | "TOKENS";
  symbol: string;
  rate: number;
};

/** An amount with its sign: two decimals, and up to four below 1 (a fraction of a cent still counts). */
export function formatAmount(value: number, symbol: string): string {
  const size = Math.abs(value);
  const digits = { minimumFractionDigits: 2, maximumFractionDigits: size !== 0 && size < 1 ? 4 : 2 };
  const text = `${symbol}${size.toLocaleString("en-US", digits)}`;
  // A refund is `-$0.0123`, the sign before the currency's.
  return value < 0 && text !== `${symbol}0.00` ? `-${text}` : text;
}

/** US dollars: `$1.25`, `$0.0042`. */
export const formatUsd = (usd: number): string => formatAmount(usd, "$");

/** An amount of quota the site's way: `$1.25`, `¥9.13`, `€0.0042`, or `1,234,567 额度`. */
export function formatMoney(quota: number, money: MoneySettings): string {
  if (money.display === "TOKENS") return `${quota.toLocaleString("en-US")} 额度`;
  return formatAmount((quota / money.quotaPerUnit) * money.rate, money.symbol);
}
