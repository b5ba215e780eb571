/** `/api/status` per family (gateway-user-api.md §3.2). */
import type { StandInFamily } from "./types";

export function statusData(family: StandInFamily, extra: Record<string, unknown>): Record<string, unknown> {
  const common = { start_time: 1_750_140_000, quota_per_unit: 500_000, display_in_currency: true };
  switch (family) {
    case "new-api":
      return {
        ...common,
        version: "v0.9.7",
        system_name: "New API",
        quota_display_type: "USD",
        custom_currency_symbol: "¤",
        custom_currency_exchange_rate: 1,
        usd_exchange_rate: 7.3,
        price: 7.3,
        enable_data_export: true,
        data_export_default_time: "hour",
        setup: true,
        checkin_enabled: false,
        self_use_mode_enabled: false,
        ...extra,
      };
    case "new-api-legacy":
      return {
        ...common,
        version: "v0.6.6",
        system_name: "New API",
        price: 7.3,
        enable_data_export: true,
        data_export_default_time: "hour",
        setup: true,
        self_use_mode_enabled: false,
        ...extra,
      };
    case "veloera":
      return {
        ...common,
        version: "v0.3.25",
        system_name: "Veloera",
        price: 7.3,
        min_topup: 1,
        enable_data_export: true,
        data_export_default_time: "hour",
        enable_online_topup: false,
        setup: true,
        check_in_enabled: false,
        ...extra,
      };
    case "one-api":
      return {
        ...common,
        version: "v0.6.11-alpha.22",
        system_name: "One API",
        top_up_link: "",
        oidc: false,
        oidc_well_known: "",
        lark_client_id: "",
        ...extra,
      };
    case "one-hub":
      return {
        ...common,
        version: "v0.14.27",
        system_name: "One Hub",
        PaymentUSDRate: 7.3,
        PaymentMinAmount: 1,
        UserInvoiceMonth: false,
        ...extra,
      };
    case "done-hub":
      return {
        ...common,
        version: "v1.23.18",
        system_name: "Done Hub",
        PaymentUSDRate: 7.3,
        UserInvoiceMonth: false,
        linuxDo_oauth: false,
        max_log_query_days: 180,
        ...extra,
      };
  }
}
