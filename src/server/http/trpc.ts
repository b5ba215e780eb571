/**
 * The tRPC endpoint for the dashboard: the fetch adapter over the app router, with the same
 * 64 KiB body limit as the REST routes (the adapter has none of its own; an import of a backup
 * file, alone, may send 4 MiB) and a cap on batches.
 * https://trpc.io/docs/server/adapters/fetch
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createRequestContext } from "../api/context";
import { appRouter } from "../api/root";
import { MAX_BATCH_SIZE } from "../api/trpc";
import { logError } from "../core/log";
import { BodyTooLarge, IMPORT_MAX_BYTES, readRequestBody } from "../net/body";
import { tooLarge } from "./respond";

/** A backup file imported into a workspace may be larger than any other body (and is never batched). */
function bodyLimitOf(url: string): number | undefined {
  return new URL(url).pathname === "/api/trpc/workspace.importAccounts" ? IMPORT_MAX_BYTES : undefined;
}

export async function handleTrpc(original: Request): Promise<Response> {
  let req = original;
  if (original.method === "POST") {
    try {
      req = new Request(original.url, {
        method: "POST",
        headers: original.headers,
        body: new Uint8Array(await readRequestBody(original, bodyLimitOf(original.url))),
      });
    } catch (error) {
      if (error instanceof BodyTooLarge) return tooLarge();
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
