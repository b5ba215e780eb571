/**
 * Translation between the REST routes and the tRPC router: read the HTTP request, call the
 * procedure through createCaller, write its answer as JSON. No auth logic lives here.
 */
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { createRequestContext } from "../api/context";
import { createCaller } from "../api/root";
import { logError } from "../core/log";
import { MSG, failure } from "../core/messages";
import { BodyTooLarge, readRequestBody } from "../net/body";
import { json, tooLarge } from "./respond";

type Caller = ReturnType<typeof createCaller>;

/** The body as JSON; undefined when it is empty or not JSON (the procedure then answers the message). */
async function readJsonBody(req: Request, max?: number): Promise<unknown> {
  const body = await readRequestBody(req, max);
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** Calls the procedure; an error becomes its JSON answer (the service's message, never a trace). */
async function callWith<T>(
  req: Request,
  resHeaders: Headers,
  call: (caller: Caller, body: never) => Promise<T>,
  readBody: boolean,
  maxBody?: number,
): Promise<{ ok: true; value: T } | { ok: false; response: Response }> {
  try {
    const body = readBody ? await readJsonBody(req, maxBody) : undefined;
    const caller = createCaller(createRequestContext(req, resHeaders));
    // Unchecked: the procedure's schema checks the body.
    return { ok: true, value: await call(caller, body as never) };
  } catch (error) {
    if (error instanceof BodyTooLarge) return { ok: false, response: tooLarge() };
    if (error instanceof TRPCError && error.code !== "INTERNAL_SERVER_ERROR") {
      // A bad parameter is an outcome of the route, answered like the others (docs/api.md).
      const status = error.code === "BAD_REQUEST" ? 200 : getHTTPStatusCodeFromError(error);
      return { ok: false, response: json(failure(error.message), status, resHeaders) };
    }
    logError("rest", error instanceof TRPCError ? (error.cause ?? error) : error);
    return { ok: false, response: json(failure(MSG.internal), 500, resHeaders) };
  }
}

export async function restCall(
  req: Request,
  call: (caller: Caller, body: never) => Promise<unknown>,
  { readBody = false, maxBody }: { readBody?: boolean; maxBody?: number } = {},
): Promise<Response> {
  const resHeaders = new Headers();
  const result = await callWith(req, resHeaders, call, readBody, maxBody);
  return result.ok ? json(result.value, 200, resHeaders) : result.response;
}

type FileAnswer =
  | { success: true; data: { filename: string; contentType: string; body: ReadableStream<Uint8Array> | Uint8Array } }
  | { success: false; message: string };

/**
 * A download: the procedure's file as the response body, an `attachment` with its name; a failure
 * (a bad parameter) is the JSON answer as everywhere, never a broken file.
 */
export async function restFile(req: Request, call: (caller: Caller) => Promise<FileAnswer>): Promise<Response> {
  const resHeaders = new Headers();
  const result = await callWith(req, resHeaders, call, false);
  if (!result.ok) return result.response;
  const answer = result.value;
  if (!answer.success) return json(answer, 200, resHeaders);
  const { filename, contentType, body } = answer.data;
  resHeaders.set("Content-Type", contentType);
  resHeaders.set(
    "Content-Disposition",
    `attachment; filename="${filename.replace(/[^\x20-\x7e]|"/g, "_")}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
  );
  resHeaders.set("Cache-Control", "no-store");
  if (body instanceof Uint8Array) resHeaders.set("Content-Length", String(body.byteLength));
  return new Response(body as BodyInit, { status: 200, headers: resHeaders });
}

/**
 * A GET's query string as an object of strings, unchecked: typed as whatever the procedure takes,
 * because the procedure's own schema checks and converts each value.
 */
export function queryOf(req: Request): never {
  return Object.fromEntries(new URL(req.url).searchParams) as never;
}

/** Readiness: the procedure's answer, HTTP 200 when ready and 503 when not (what load balancers read). */
export async function restReady(
  req: Request,
  call: (caller: Caller) => Promise<{ ready: boolean }>,
): Promise<Response> {
  const resHeaders = new Headers();
  const result = await callWith(req, resHeaders, call, false);
  if (!result.ok) return result.response;
  return json(result.value, result.value.ready ? 200 : 503, resHeaders);
}

/** Prometheus' text format: the procedure's text as the body; a refusal is the JSON answer. */
export async function restMetrics(req: Request, call: (caller: Caller) => Promise<string>): Promise<Response> {
  const resHeaders = new Headers();
  const result = await callWith(req, resHeaders, call, false);
  if (!result.ok) return result.response;
  resHeaders.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  return new Response(result.value, { status: 200, headers: resHeaders });
}
