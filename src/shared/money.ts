/** Money and counts as every page, export and statement writes them: one rule for the decimals, one sign each. */

/** How a site shows money (its `/api/status` settings, as the summary reports them). */
export type MoneySettings = {
  quotaPerUnit: number;
  display: "USD" | "CNY" | "CUSTOM" | "TOKENS";
  symbol: string;
  rate: number;
};

// One formatter each, made once: toLocaleString with options makes one per call (tens of µs).
const TWO_PLACES = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const FOUR_PLACES = new Intl.NumberFormat("en-US", { minimumFractionDigits: 4, maximumFractionDigits: 4 });

/**
 * An amount with its sign: two decimals from 1 up, four below it (a fraction of a cent still
 * counts), so the amounts of a column line up: `$12.50`, `$0.8657`, `$0.0120`, `$0.0012`.
 */
export function formatAmount(value: number, symbol: string): string {
  const size = Math.abs(value);
  const text = `${symbol}${(size !== 0 && size < 0.99995 ? FOUR_PLACES : TWO_PLACES).format(size)}`;
  // A refund is `-$0.0123`, the sign before the currency's.
  return value < 0 && !/^\D*0\.0+$/.test(text) ? `-${text}` : text;
}

/**
 * An amount as the API answers it: to the millionth (a figure, not text; formatAmount writes it).
 * One too large to have millionths (a hostile site's 1e308) is kept as it is, not made Infinity.
 */
export const round6 = (n: number): number => (Math.abs(n) < 1e9 ? Math.round(n * 1e6) / 1e6 : n);

/** US dollars of a quota, at the site's quota units a dollar, to the millionth. */
export const usdOfQuota = (quota: number, quotaPerUnit: number): number => round6(quota / quotaPerUnit);

/** US dollars: `$1.25`, `$0.0042`. */
export const formatUsd = (usd: number): string => formatAmount(usd, "$");

/** An amount of quota the site's way: `$1.25`, `¥9.13`, `€0.0042`, or `1,234,567 额度`. */
export function formatMoney(quota: number, money: MoneySettings): string {
  if (money.display === "TOKENS") return `${quota.toLocaleString("en-US")} 额度`;
  return formatAmount((quota / money.quotaPerUnit) * money.rate, money.symbol);
}

/**
 * A large count the Chinese way: exact up to 99,999, then in 万 and 亿 with at most two decimals
 * (`12.35万`, `3.2亿`). For totals and cards; table cells keep the exact number.
 */
export function formatCount(n: number): string {
  const size = Math.abs(n);
  const cut = (v: number) => v.toLocaleString("en-US", { maximumFractionDigits: 2 });
  if (size < 100_000) return n.toLocaleString("en-US");
  if (size < 1e8) return `${cut(n / 1e4)}万`;
  return `${cut(n / 1e8)}亿`;
}

/** The quota an amount typed in the site's own money is (the inverse of formatMoney); whole quota units. */
export function quotaOfAmount(amount: number, money: MoneySettings): number {
  if (money.display === "TOKENS") return Math.round(amount);
  return Math.round((amount / money.rate) * money.quotaPerUnit);
}

/** The amount in the site's own money a quota is, unrounded (a form's starting value). */
export function amountOfQuota(quota: number, money: MoneySettings): number {
  if (money.display === "TOKENS") return quota;
  return (quota / money.quotaPerUnit) * money.rate;
}
