/**
 * A procedure's REST endpoint, declared on the procedure itself (its `meta`): the method and the
 * path, where its input comes from and how its answer is written. The REST dispatcher
 * (http/dispatch.ts) serves every declared endpoint, and the OpenAPI document lists them; nothing
 * else names a REST route.
 */

export type RestMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * How the answer is written: `json` the procedure's answer as it is; `data` its value wrapped as
 * `{success: true, data}`; `file` a download (the procedure's file, or its JSON failure);
 * `ready` HTTP 200 when `ready` is true, else 503; `text` Prometheus' text format.
 */
export type RestAnswer = "json" | "data" | "file" | "ready" | "text";

/** What a request carried, for an endpoint whose procedure takes its input in another shape. */
export type RestParts = {
  method: RestMethod;
  params: Record<string, string>;
  query: Record<string, string>;
  /** The query string as sent, without its `?`. */
  search: string;
  body: unknown;
};

export type RestRoute = {
  method: RestMethod;
  /**
   * The path as OpenAPI writes it: `/api/account/tokens/{id}`; a `{name}` is one segment, a last
   * `{name...}` the rest of the path as sent.
   */
  path: string;
  /** Default `json`. */
  answer?: RestAnswer;
  /**
   * Where the input comes from: `query` (the default of GET and DELETE), `body` (the JSON body,
   * the default of POST, PUT and PATCH), `none`. The path's parameters are laid over it.
   */
  input?: "query" | "body" | "none";
  /** The input the procedure takes, when it is not the fields above. */
  shape?: (parts: RestParts) => unknown;
  /** The largest body read, in bytes (default: the server's limit for JSON bodies). */
  maxBody?: number;
  /**
   * The operation's summary and description in the OpenAPI document, for an endpoint whose
   * part's file (http/openapi/) writes none; its parameters, body and answer come from the
   * procedure's schemas.
   */
  summary?: string;
  description?: string;
  /** Who may call it, for the document: a signed-in account (the default), a workspace, the operator, anyone. */
  auth?: "session" | "workspace" | "admin" | "public";
};

export type ProcedureMeta = { rest?: RestRoute | RestRoute[] };

/** `.meta(rest("GET", "/api/account/logs"))`: the procedure's endpoint. */
export function rest(method: RestMethod, path: string, more: Omit<RestRoute, "method" | "path"> = {}): ProcedureMeta {
  return { rest: { method, path, ...more } };
}

/** Several endpoints of one procedure. */
export function rests(...routes: ProcedureMeta[]): ProcedureMeta {
  return { rest: routes.flatMap((m) => (Array.isArray(m.rest) ? m.rest : m.rest ? [m.rest] : [])) };
}
