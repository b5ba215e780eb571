/**
 * Translation between HTTP and the tRPC router: read the request, call the procedure through
 * createCaller, write its answer. No auth logic lives here.
 */
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { createRequestContext } from "../api/context";
import { createCaller } from "../api/root";
import type { RestAnswer } from "../api/rest-routes";
import { logError } from "../core/log";
import { MSG, failure } from "../core/messages";
import { BodiesBusy, BodyTooLarge, readRequestBody } from "../net/body";
import { bodiesBusy, json, tooLarge } from "./respond";

export type Caller = ReturnType<typeof createCaller>;

/** The body as JSON; undefined when it is empty or not JSON (the procedure then answers the message). */
export async function readJsonBody(req: Request, max?: number): Promise<unknown> {
  const body = await readRequestBody(req, max);
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** Calls the procedure; an error becomes its JSON answer (the service's message, never a trace). */
async function callWith(
  req: Request,
  resHeaders: Headers,
  call: (caller: Caller) => Promise<unknown>,
): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  try {
    const caller = createCaller(createRequestContext(req, resHeaders));
    return { ok: true, value: await call(caller) };
  } catch (error) {
    if (error instanceof BodyTooLarge) return { ok: false, response: tooLarge() };
    if (error instanceof BodiesBusy) return { ok: false, response: bodiesBusy() };
    if (error instanceof TRPCError && error.code !== "INTERNAL_SERVER_ERROR") {
      // A bad parameter is an outcome of the route, answered like the others (docs/api.md).
      const status = error.code === "BAD_REQUEST" ? 200 : getHTTPStatusCodeFromError(error);
      return { ok: false, response: json(failure(error.message), status, resHeaders) };
    }
    logError("rest", error instanceof TRPCError ? (error.cause ?? error) : error);
    return { ok: false, response: json(failure(MSG.internal), 500, resHeaders) };
  }
}

type FileData = { filename: string; contentType: string; body: ReadableStream<Uint8Array> | Uint8Array };

/**
 * A download: the procedure's file as the response body, an `attachment` with its name; a failure
 * (a bad parameter) is the JSON answer as everywhere, never a broken file.
 */
function fileResponse(answer: { success: boolean; data?: FileData }, resHeaders: Headers): Response {
  if (!answer.success || !answer.data) return json(answer, 200, resHeaders);
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

/** The procedure's answer written as its endpoint declares (api/rest-routes.ts `RestAnswer`). */
export async function answerWith(
  req: Request,
  answer: RestAnswer,
  call: (caller: Caller) => Promise<unknown>,
): Promise<Response> {
  const resHeaders = new Headers();
  const result = await callWith(req, resHeaders, call);
  if (!result.ok) return result.response;
  const { value } = result;
  switch (answer) {
    case "json":
      return json(value, 200, resHeaders);
    case "data":
      return json({ success: true, data: value }, 200, resHeaders);
    case "file":
      return fileResponse(value as { success: boolean; data?: FileData }, resHeaders);
    case "ready":
      // What load balancers read: 200 when ready, 503 when not.
      return json(value, (value as { ready: boolean }).ready ? 200 : 503, resHeaders);
    case "text":
      // Prometheus' text format.
      resHeaders.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
      return new Response(value as string, { status: 200, headers: resHeaders });
  }
}
