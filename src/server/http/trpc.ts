/**
 * The tRPC endpoint for the dashboard: the fetch adapter over the app router, with the same
 * 64 KiB body limit as the REST routes (the adapter has none of its own; an import of a backup
 * file, alone, may send 4 MiB) and a cap on batches.
 * https://trpc.io/docs/server/adapters/fetch
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createRequestContext } from "../api/context";
import { appRouter, createCaller } from "../api/root";
import { TRPCError } from "@trpc/server";
import { MSG, failure } from "../core/messages";
import { MAX_BATCH_SIZE } from "../api/trpc";
import { logError } from "../core/log";
import { BodiesBusy, BodyTooLarge, IMPORT_MAX_BYTES, readRequestBody } from "../net/body";
import { bodiesBusy, json, tooLarge } from "./respond";

/** A backup file imported into a workspace may be larger than any other body (and is never batched). */
function bodyLimitOf(url: string): number | undefined {
  return new URL(url).pathname === "/api/trpc/workspace.importAccounts" ? IMPORT_MAX_BYTES : undefined;
}

/** Whether the request comes from a signed-in workspace (a file is read only for one). */
async function signedInWorkspace(req: Request): Promise<boolean> {
  try {
    await createCaller(createRequestContext(req, new Headers())).workspace.me();
    return true;
  } catch (error) {
    if (error instanceof TRPCError && (error.code === "UNAUTHORIZED" || error.code === "FORBIDDEN")) return false;
    throw error;
  }
}

export async function handleTrpc(original: Request): Promise<Response> {
  let req = original;
  if (original.method === "POST") {
    const limit = bodyLimitOf(original.url);
    if (limit !== undefined && !(await signedInWorkspace(original))) {
      return json(failure(MSG.unauthenticated), 401);
    }
    try {
      req = new Request(original.url, {
        method: "POST",
        headers: original.headers,
        body: new Uint8Array(await readRequestBody(original, limit)),
      });
    } catch (error) {
      if (error instanceof BodyTooLarge) return tooLarge();
      if (error instanceof BodiesBusy) return bodiesBusy();
      throw error;
    }
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    maxBatchSize: MAX_BATCH_SIZE,
    createContext: ({ resHeaders }) => createRequestContext(req, resHeaders),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") logError(`trpc:${path ?? "?"}`, error.cause ?? error);
    },
  });
}
