/**
 * Gateway families and money settings, read from a site's unauthenticated `GET /api/status`
 * (gateway-user-api.md §8 for the detection heuristics, §3.2 for the money display recipe).
 */
import { z } from "zod";
import { BOUNDS, within } from "../../shared/bounds";

export const FAMILIES = ["new-api", "new-api-legacy", "veloera", "one-api", "one-hub", "done-hub", "unknown"] as const;
export type Family = (typeof FAMILIES)[number];

export const DISPLAY_TYPES = ["USD", "CNY", "CUSTOM", "TOKENS"] as const;
export type DisplayType = (typeof DISPLAY_TYPES)[number];

/** How a site shows money: quota units per USD, and the currency it displays (1 USD = rate × symbol). */
export const moneySchema = z
  .object({
    quotaPerUnit: z.number().describe("每 1 美元对应的额度单位（站点的 quota_per_unit）"),
    display: z.enum(DISPLAY_TYPES).describe("站点的显示方式：美元、人民币、自定义货币，或直接显示额度"),
    symbol: z.string().describe("货币符号（TOKENS 时为空）"),
    rate: z.number().describe("1 美元折合多少显示货币"),
  })
  .meta({ id: "Money" });
export type Money = z.infer<typeof moneySchema>;

export type SiteProfile = { family: Family; version: string | null; systemName: string | null; money: Money };

const DEFAULT_QUOTA_PER_UNIT = 500_000;

const has = (data: Record<string, unknown>, key: string) => Object.hasOwn(data, key);

export function detectFamily(data: Record<string, unknown>): Family {
  if (has(data, "max_log_query_days") || has(data, "linuxDo_oauth")) return "done-hub";
  if (has(data, "quota_display_type") || has(data, "usd_exchange_rate")) return "new-api";
  if (has(data, "check_in_enabled") && has(data, "enable_data_export")) return "veloera";
  if (has(data, "PaymentUSDRate") || has(data, "UserInvoiceMonth")) return "one-hub";
  if (has(data, "enable_data_export") && (has(data, "setup") || has(data, "self_use_mode_enabled"))) {
    return "new-api-legacy";
  }
  if ((has(data, "oidc_well_known") || has(data, "lark_client_id")) && !has(data, "enable_data_export")) {
    return "one-api";
  }
  return "unknown";
}

/** A setting in its range (docs/design.md 29), else the family's default: outside it is no setting a site runs with. */
const setting = (v: unknown, range: { min: number; max: number }, fallback: number) =>
  typeof v === "number" ? (within(v, range.min, range.max) ?? fallback) : fallback;
const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim().slice(0, 200) : null);

/** A quota_per_unit kept in the store, read as moneyFrom reads one now (a row kept before the bounds too). */
export const keptQuotaPerUnit = (v: number | null): number =>
  within(v, BOUNDS.quotaPerUnit.min, BOUNDS.quotaPerUnit.max) ?? DEFAULT_QUOTA_PER_UNIT;

export function moneyFrom(data: Record<string, unknown>): Money {
  const quotaPerUnit = setting(data.quota_per_unit, BOUNDS.quotaPerUnit, DEFAULT_QUOTA_PER_UNIT);
  const type = data.quota_display_type;
  if (type === "CNY")
    return {
      quotaPerUnit,
      display: "CNY",
      symbol: "¥",
      rate: setting(data.usd_exchange_rate, BOUNDS.exchangeRate, 7.3),
    };
  if (type === "CUSTOM") {
    return {
      quotaPerUnit,
      display: "CUSTOM",
      symbol: (text(data.custom_currency_symbol) ?? "¤").slice(0, 8),
      rate: setting(data.custom_currency_exchange_rate, BOUNDS.exchangeRate, 1),
    };
  }
  if (type === "TOKENS" || (type === undefined && data.display_in_currency === false)) {
    return { quotaPerUnit, display: "TOKENS", symbol: "", rate: 1 };
  }
  return { quotaPerUnit, display: "USD", symbol: "$", rate: 1 };
}

export function profileFrom(data: Record<string, unknown>): SiteProfile {
  return {
    family: detectFamily(data),
    version: text(data.version),
    systemName: text(data.system_name),
    money: moneyFrom(data),
  };
}

/** A site never probed (or no longer reachable) is read with new-api rules and the default money. */
export const UNPROBED: SiteProfile = {
  family: "unknown",
  version: null,
  systemName: null,
  money: { quotaPerUnit: DEFAULT_QUOTA_PER_UNIT, display: "USD", symbol: "$", rate: 1 },
};
