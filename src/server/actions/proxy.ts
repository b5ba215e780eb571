/**
 * The proxy for REST clients (docs/design.md 20): `/api/site/{path}` forwards to the account's site
 * `/api/{path}` with its saved access token, so a client holding only a session or a workspace
 * API token uses the site's user routes without ever holding the access token. Only the routes
 * listed here, exactly as spelled here, per family; never the ones that would change the password,
 * rotate the access token, delete the account or touch 2FA, payments or administration.
 */
import type { Family } from "../gateway/families";
import type { WriteRequest } from "../gateway/writes";
import { Refusal } from "../core/errors";

export type ProxyMethod = "GET" | "POST" | "PUT" | "DELETE";

type Route = { method: ProxyMethod; path: RegExp; families?: Family[]; write?: boolean };

const NEW_API: Family[] = ["new-api", "new-api-legacy", "unknown"];
const HUB: Family[] = ["one-hub", "done-hub"];

/** The user-scope routes a client may reach, as the families spell them (gateway-user-api.md, gateway-actions.md). */
const ROUTES: Route[] = [
  { method: "GET", path: /^\/api\/status$/ },
  { method: "GET", path: /^\/api\/user\/self$/ },
  { method: "GET", path: /^\/api\/log\/self$/ },
  { method: "GET", path: /^\/api\/log\/self\/stat$/ },
  { method: "GET", path: /^\/api\/token\/$/ },
  { method: "POST", path: /^\/api\/token\/$/, write: true },
  { method: "PUT", path: /^\/api\/token\/$/, write: true },
  { method: "DELETE", path: /^\/api\/token\/\d{1,12}$/, write: true },
  { method: "POST", path: /^\/api\/user\/topup$/, write: true },
  { method: "GET", path: /^\/api\/user\/topup\/self$/, families: ["new-api", "unknown"] },
  { method: "GET", path: /^\/api\/user\/models$/, families: [...NEW_API, "veloera"] },
  { method: "GET", path: /^\/api\/user\/self\/groups$/, families: [...NEW_API, "veloera"] },
  { method: "GET", path: /^\/api\/pricing$/, families: [...NEW_API, "veloera"] },
  { method: "GET", path: /^\/api\/user\/available_models$/, families: ["one-api"] },
  { method: "GET", path: /^\/api\/available_model$/, families: HUB },
  { method: "GET", path: /^\/api\/prices$/, families: HUB },
  { method: "GET", path: /^\/api\/user\/checkin$/, families: ["new-api", "unknown"] },
  { method: "POST", path: /^\/api\/user\/checkin$/, families: ["new-api", "unknown"], write: true },
  { method: "GET", path: /^\/api\/user\/check_in_status$/, families: ["veloera"] },
  { method: "POST", path: /^\/api\/user\/check_in$/, families: ["veloera"], write: true },
];

const PROXY_LIMITS = { bodyBytes: 64 * 1024, queryChars: 2048 } as const;

/** Why a proxied call is not sent, in words. */
class ProxyRefused extends Refusal {}

/**
 * The site request a client's call becomes, or why it is refused. `rest` is what follows
 * `/api/site/` as the client sent it (still percent-encoded): anything but plain lowercase path
 * segments is refused before it is compared, so no spelling (an encoded slash or dot, `..`, a
 * doubled slash, another case) reaches a route the list does not name.
 */
export function proxyRequest(
  family: Family,
  method: string,
  rest: string,
  query: string,
  body: unknown,
): WriteRequest & { method: ProxyMethod; write: boolean } {
  if (!/^[a-z0-9_/]{1,200}$/.test(rest) || rest.includes("//") || rest.startsWith("/")) {
    throw new ProxyRefused("不允许代理的路径：只能是站点用户接口的原样路径（小写、无编码字符）");
  }
  const path = `/api/${rest}`;
  const route = ROUTES.find(
    (r) => r.method === method && r.path.test(path) && (r.families === undefined || r.families.includes(family)),
  );
  if (!route) throw new ProxyRefused(`不允许代理：${method} ${path}（不在允许的用户接口之列，或这类站点没有这个接口）`);
  if (query.length > PROXY_LIMITS.queryChars) throw new ProxyRefused("查询参数过长");
  const params = new URLSearchParams(query);
  const q: Record<string, string> = {};
  for (const [k, v] of params) q[k] = v;
  if (route.method === "GET" || route.method === "DELETE") {
    return { method: route.method, path, query: q, write: route.write === true };
  }
  if (body !== undefined && JSON.stringify(body).length > PROXY_LIMITS.bodyBytes) {
    throw new ProxyRefused("请求体过大（至多 64 KiB）");
  }
  return { method: route.method, path, query: q, body: body ?? {}, write: true };
}
