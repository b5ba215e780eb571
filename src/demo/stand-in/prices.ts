/**
 * The stand-in's prices, groups and usable models, per family (gateway-actions.md §2.5, §3, §4,
 * §5): new-api's `/api/pricing` (anonymous to a token caller, `group_ratio` beside `data`, no
 * `message`), `/api/user/self/groups` and `/api/user/models`; one-api's
 * `/api/user/available_models` only; one-hub's public `/api/prices`, `/api/user_group_map` and
 * `/api/available_model`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ok, send } from "./answer";
import type { GatewayOptions, GatewayUser, StandInFamily } from "./types";

const NEW_API_LIKE = new Set<StandInFamily>(["new-api", "new-api-legacy", "veloera"]);
const HUB_LIKE = new Set<StandInFamily>(["one-hub", "done-hub"]);

/** Answers a price route when `path` is one for the family; false otherwise. */
export function answerPrices(
  family: StandInFamily,
  options: GatewayOptions,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  authenticate: () => GatewayUser | null,
): boolean {
  if (req.method !== "GET") return false;
  const pricing = options.pricing ?? { data: [], groupRatios: { default: 1 } };
  const ratios = pricing.groupRatios ?? { default: 1 };
  if (NEW_API_LIKE.has(family)) {
    if (path === "/api/pricing") {
      send(res, 200, {
        success: true,
        data: pricing.data,
        group_ratio: ratios,
        usable_group: Object.fromEntries(Object.keys(ratios).map((g) => [g, `${g}分组`])),
      });
      return true;
    }
    if (path === "/api/user/self/groups") {
      const user = authenticate();
      if (!user) return true;
      const groups: Record<string, unknown> = Object.fromEntries(
        Object.entries(ratios).map(([g, ratio]) => [g, { ratio, desc: `${g}分组` }]),
      );
      if (family === "new-api") groups.auto = { ratio: "自动", desc: "自动选择分组" };
      ok(res, groups);
      return true;
    }
    if (path === "/api/user/models") {
      const user = authenticate();
      if (user) ok(res, user.models ?? null);
      return true;
    }
    return false;
  }
  if (family === "one-api" && path === "/api/user/available_models") {
    const user = authenticate();
    if (user) ok(res, user.models ?? []);
    return true;
  }
  if (HUB_LIKE.has(family)) {
    if (path === "/api/prices") {
      if (pricing.data.length === 0) send(res, 200, { success: false, message: "pricing data not found" });
      else ok(res, pricing.data);
      return true;
    }
    if (path === "/api/user_group_map") {
      ok(
        res,
        Object.fromEntries(
          Object.entries(ratios).map(([g, ratio], i) => [
            g,
            {
              id: i + 1,
              symbol: g,
              name: g,
              ratio,
              api_rate: 600,
              public: true,
              promotion: false,
              min: 0,
              max: 0,
              enable: true,
            },
          ]),
        ),
      );
      return true;
    }
    if (path === "/api/available_model") {
      // Public: the models of the public groups (the caller's own group only with a session).
      const models = new Set(options.users.flatMap((u) => u.models ?? []));
      ok(
        res,
        Object.fromEntries([...models].map((m) => [m, { groups: Object.keys(ratios), owned_by: "OpenAI", price: {} }])),
      );
      return true;
    }
  }
  return false;
}
