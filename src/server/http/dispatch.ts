/**
 * The REST endpoints, served from their declarations (api/rest-routes.ts): each procedure that
 * names a method and a path is that endpoint; a request is matched to it, its input made from
 * the path, the query string or the body, and the answer written as the declaration says.
 */
import { appRouter } from "../api/root";
import type { ProcedureMeta, RestRoute } from "../api/rest-routes";
import { MSG, failure } from "../core/messages";
import { answerWith, readJsonBody, type Caller } from "./rest";
import { json } from "./respond";

export type RestEndpoint = {
  route: RestRoute;
  /** The procedure's path in the router (`tokens.update`). */
  procedure: string;
  /** The path's segments; `{name}` one segment, `{name...}` the rest of the path. */
  segments: string[];
};

let table: RestEndpoint[] | undefined;

/** Every declared endpoint, in the router's order. */
export function restEndpoints(): RestEndpoint[] {
  table ??= Object.entries(
    appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>,
  ).flatMap(([procedure, { _def }]) => {
    const declared = _def.meta?.rest;
    const routes = declared === undefined ? [] : Array.isArray(declared) ? declared : [declared];
    return routes.map((route) => ({ route, procedure, segments: route.path.split("/").filter(Boolean) }));
  });
  return table;
}

/**
 * The path's parameters when `raw` (the request's segments, as sent) is this endpoint's path;
 * `slash`: the path ended with one (kept in a rest-of-path parameter, where it may matter).
 */
function match(segments: string[], raw: string[], slash: boolean): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    const name = /^\{(\w+)(\.\.\.)?\}$/.exec(segment);
    if (name?.[2]) {
      // The rest of the path, as the request spelled it (the procedure checks it).
      if (raw.length <= i) return null;
      params[name[1] as string] = raw.slice(i).join("/") + (slash ? "/" : "");
      return params;
    }
    const part = raw[i];
    if (part === undefined) return null;
    if (name) {
      try {
        params[name[1] as string] = decodeURIComponent(part);
      } catch {
        return null;
      }
    } else if (segment !== part) return null;
  }
  return raw.length === segments.length ? params : null;
}

/** How many segments of the path are its own words: the most literal path wins (`tokens/rules` over `tokens/{id}`). */
const literal = (e: RestEndpoint) => e.segments.filter((s) => !s.startsWith("{")).length;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The endpoint a request's method and path name, with the path's parameters; else why not: no
 * endpoint has the path, or none of its endpoints takes the method (those it takes are listed).
 */
export function findEndpoint(
  method: string,
  pathname: string,
):
  | { endpoint: RestEndpoint; params: Record<string, string> }
  | { endpoint: null; allowed: RestEndpoint["route"]["method"][] } {
  // A trailing slash names the same endpoint.
  const raw = pathname.replace(/\/$/, "").split("/").filter(Boolean);
  const found = restEndpoints()
    .map((endpoint) => ({ endpoint, params: match(endpoint.segments, raw, pathname.endsWith("/")) }))
    .filter((m): m is { endpoint: RestEndpoint; params: Record<string, string> } => m.params !== null);
  if (found.length === 0) return { endpoint: null, allowed: [] };
  const best = Math.max(...found.map((m) => literal(m.endpoint)));
  const onPath = found.filter((m) => literal(m.endpoint) === best);
  const hit = onPath.find((m) => m.endpoint.route.method === method);
  return hit ?? { endpoint: null, allowed: [...new Set(onPath.map((m) => m.endpoint.route.method))] };
}

/** Serves a REST request: the endpoint its method and path name, else 404 or 405 in words. */
export async function dispatch(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const hit = findEndpoint(req.method, url.pathname);
  if (!hit.endpoint) {
    if (hit.allowed.length === 0) return json(failure(MSG.noSuchRoute), 404);
    const allowed = hit.allowed.join(", ");
    return json(failure(`${MSG.methodNotAllowedPrefix}${allowed}`), 405, new Headers({ Allow: allowed }));
  }
  const { route, procedure } = hit.endpoint;
  const { params } = hit;
  const source = route.input ?? (req.method === "GET" || req.method === "DELETE" ? "query" : "body");
  const query = Object.fromEntries(url.searchParams);
  const hasParams = Object.keys(params).length > 0;
  return answerWith(req, route.answer ?? "json", async (caller: Caller) => {
    const body = source === "body" ? await readJsonBody(req, route.maxBody) : undefined;
    const input = route.shape
      ? route.shape({ method: route.method, params, query, body, search: url.search.replace(/^\?/, "") })
      : source === "none"
        ? hasParams
          ? params
          : undefined
        : source === "query"
          ? { ...query, ...params }
          : hasParams
            ? { ...(isObject(body) ? body : {}), ...params }
            : body;
    const call = procedure.split(".").reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], caller);
    return (call as (input: unknown) => Promise<unknown>)(input);
  });
}
