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
async function readJsonBody(req: Request): Promise<unknown> {
  const body = await readRequestBody(req);
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

export async function restCall(
  req: Request,
  call: (caller: Caller, body: unknown) => Promise<unknown>,
  { readBody = false } = {},
): Promise<Response> {
  const resHeaders = new Headers();
  try {
    const body = readBody ? await readJsonBody(req) : undefined;
    const caller = createCaller(createRequestContext(req, resHeaders));
    return json(await call(caller, body), 200, resHeaders);
  } catch (error) {
    if (error instanceof BodyTooLarge) return tooLarge();
    if (error instanceof TRPCError && error.code !== "INTERNAL_SERVER_ERROR") {
      return json(failure(error.message), getHTTPStatusCodeFromError(error), resHeaders);
    }
    logError("rest", error instanceof TRPCError ? (error.cause ?? error) : error);
    return json(failure(MSG.internal), 500, resHeaders);
  }
}

/** A GET's query string as an object of strings (the procedure checks and converts each). */
export function queryOf(req: Request): Record<string, string> {
  return Object.fromEntries(new URL(req.url).searchParams);
}
