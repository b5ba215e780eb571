/**
 * Translation between the REST routes and the tRPC router: read the HTTP request, call the
 * procedure through createCaller, write its answer as JSON. No auth logic lives here.
 */
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { createCaller } from "../api/root";
import { createRequestContext } from "../api/context";
import { logError } from "../log";
import { MSG, failure } from "../messages";
import { readCapped } from "./read-capped";

export const MAX_BODY_BYTES = 64 * 1024;

type Caller = ReturnType<typeof createCaller>;

export function json(body: unknown, status: number, headers = new Headers()): Response {
  headers.set("Content-Type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(body), { status, headers });
}

export class BodyTooLarge extends Error {}

/** The request body, refusing more than MAX_BODY_BYTES whether or not Content-Length says so. */
export async function readBodyCapped(req: Request): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await readCapped(req, MAX_BODY_BYTES, () => new BodyTooLarge()));
}

/** The body as JSON; undefined when it is empty or not JSON (the procedure then answers the message). */
async function readJsonBody(req: Request): Promise<unknown> {
  const body = await readCapped(req, MAX_BODY_BYTES, () => new BodyTooLarge());
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

export function tooLarge(): Response {
  return json(failure(MSG.bodyTooLarge), 413);
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
