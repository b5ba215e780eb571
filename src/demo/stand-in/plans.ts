/**
 * new-api's subscriptions as a signed-in user reads them (since 2026-02): `GET /api/subscription/self`
 * (the preference, the active rows and every row, each item `{subscription: …}`, no titles) and
 * `GET /api/subscription/plans` (enabled plans, `{plan: …}`; empty until the administrator
 * confirms the payment terms). The routes that buy are not served: nothing here is bought.
 */
import type { ServerResponse } from "node:http";
import { ok } from "./answer";
import type { GatewayUser, StandInPlan } from "./types";

export const PLAN_PATHS = ["/api/subscription/self", "/api/subscription/plans"];

export function plansAnswer(
  path: string,
  user: GatewayUser,
  plans: StandInPlan[],
  compliance: boolean,
  res: ServerResponse,
): void {
  if (path === "/api/subscription/plans") {
    const listed = compliance ? plans.filter((p) => p.enabled !== false) : [];
    return ok(
      res,
      listed.map((p) => ({
        plan: {
          id: p.id,
          title: p.title,
          subtitle: "",
          price_amount: p.price,
          currency: "USD",
          duration_unit: "month",
          duration_value: 1,
          custom_seconds: 0,
          enabled: true,
          sort_order: 0,
          allow_balance_pay: true,
          allow_wallet_overflow: p.overflow ?? true,
          max_purchase_per_user: 0,
          upgrade_group: "",
          downgrade_group: "",
          total_amount: p.total,
          quota_reset_period: p.resetPeriod,
          quota_reset_custom_seconds: p.resetSeconds ?? 0,
          created_at: 1_767_225_600,
          updated_at: 1_767_225_600,
        },
      })),
    );
  }
  const now = Math.floor(Date.now() / 1000);
  const rows = (user.subscriptions ?? []).map((s) => ({
    subscription: {
      id: s.id,
      user_id: user.data.id,
      plan_id: s.planId,
      amount_total: s.total,
      amount_used: s.used,
      start_time: s.start,
      end_time: s.end,
      status: s.status ?? (s.end > now ? "active" : "expired"),
      source: s.source ?? "order",
      last_reset_time: s.lastReset ?? s.start,
      next_reset_time: s.nextReset ?? 0,
      upgrade_group: "",
      prev_user_group: "",
      downgrade_group: "",
      allow_wallet_overflow: s.overflow ?? true,
      created_at: s.start,
      updated_at: now,
    },
  }));
  const active = rows
    .filter((r) => r.subscription.status === "active" && r.subscription.end_time > now)
    .sort((a, b) => b.subscription.end_time - a.subscription.end_time || b.subscription.id - a.subscription.id);
  ok(res, {
    billing_preference: user.billingPreference ?? "subscription_first",
    subscriptions: active,
    all_subscriptions: rows,
  });
}
