/**
 * The REST endpoints, served from their declarations (api/rest-routes.ts): each procedure that
 * names a method and a path is that endpoint; a request is matched to it, its input made from
 * the path, the query string or the body, and the answer written as the declaration says.
 */
import { appRouter } from "../api/root";
import type { ProcedureMeta, RestParts, RestRoute } from "../api/rest-routes";
import { MSG, failure } from "../core/messages";
import { answerWith, readJsonBody, type Caller } from "./rest";
import { json } from "./respond";

/** A segment of an endpoint's path: its own word, a `{name}` of one segment, or a last `{name...}`. */
type Segment = { word: string } | { param: string; rest: boolean };

export type RestEndpoint = {
  route: RestRoute;
  /** The procedure's path in the router (`tokens.update`). */
  procedure: string;
  segments: Segment[];
  /** How many segments are its own words: the most literal path wins (`tokens/rules` over `tokens/{id}`). */
  words: number;
};

let table: RestEndpoint[] | undefined;

function segmentOf(text: string): Segment {
  const param = /^\{(\w+)(\.\.\.)?\}$/.exec(text);
  return param ? { param: param[1] as string, rest: param[2] !== undefined } : { word: text };
}

/** Every declared endpoint, in the router's order (read once: the router does not change). */
export function restEndpoints(): RestEndpoint[] {
  table ??= Object.entries(
    appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>,
  ).flatMap(([procedure, { _def }]) => {
    const declared = _def.meta?.rest;
    const routes = declared === undefined ? [] : Array.isArray(declared) ? declared : [declared];
    return routes.map((route) => {
      const segments = route.path.split("/").filter(Boolean).map(segmentOf);
      return { route, procedure, segments, words: segments.filter((g) => "word" in g).length };
    });
  });
  return table;
}

/**
 * The path's parameters when `raw` (the request's segments, as sent) is this endpoint's path;
 * `slash`: the path ended with one (kept in a rest-of-path parameter, where it may matter).
 */
function match(segments: Segment[], raw: string[], slash: boolean): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    const part = raw[i];
    if (part === undefined) return null;
    if ("word" in segment) {
      if (segment.word !== part) return null;
    } else if (segment.rest) {
      // The rest of the path, as the request spelled it (the procedure checks it).
      params[segment.param] = raw.slice(i).join("/") + (slash ? "/" : "");
      return params;
    } else {
      try {
        params[segment.param] = decodeURIComponent(part);
      } catch {
        return null;
      }
    }
  }
  return raw.length === segments.length ? params : null;
}

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
  const best = Math.max(...found.map((m) => m.endpoint.words));
  const onPath = found.filter((m) => m.endpoint.words === best);
  const hit = onPath.find((m) => m.endpoint.route.method === method);
  return hit ?? { endpoint: null, allowed: [...new Set(onPath.map((m) => m.endpoint.route.method))] };
}

/** The procedure's input from what the request carried, as its endpoint declares it. */
function inputOf(route: RestRoute, parts: RestParts, source: "query" | "body" | "none"): unknown {
  if (route.shape) return route.shape(parts);
  const { params, query, body } = parts;
  const hasParams = Object.keys(params).length > 0;
  if (source === "query") return { ...query, ...params };
  if (source === "none") return hasParams ? params : undefined;
  // A body that is no object reaches the procedure as it is (its schema says what is wrong).
  return hasParams ? { ...(isObject(body) ? body : {}), ...params } : body;
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
  const source = route.input ?? (req.method === "GET" || req.method === "DELETE" ? "query" : "body");
  return answerWith(req, route.answer ?? "json", async (caller: Caller) => {
    // A file is read only for a workspace that is signed in: the credential before the body.
    if (source === "body" && route.maxBody !== undefined && route.auth === "workspace") await caller.workspace.me();
    const body = source === "body" ? await readJsonBody(req, route.maxBody) : undefined;
    const parts: RestParts = {
      method: route.method,
      params: hit.params,
      query: Object.fromEntries(url.searchParams),
      search: url.search.replace(/^\?/, ""),
      body,
    };
    const call = procedure.split(".").reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], caller);
    return (call as (input: unknown) => Promise<unknown>)(inputOf(route, parts, source));
  });
}
