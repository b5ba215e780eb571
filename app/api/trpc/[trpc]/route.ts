import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createRequestContext } from "@/src/server/api/context";
import { appRouter } from "@/src/server/api/root";
import { logError } from "@/src/server/log";
import { BodyTooLarge, readBodyCapped, tooLarge } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

async function handler(original: Request): Promise<Response> {
  let req = original;
  if (original.method === "POST") {
    // The fetch adapter has no body limit of its own: buffer at most 64 KiB before it parses.
    try {
      const body = await readBodyCapped(original);
      req = new Request(original.url, { method: "POST", headers: original.headers, body });
    } catch (error) {
      if (error instanceof BodyTooLarge) return tooLarge();
      throw error;
    }
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: ({ resHeaders }) => createRequestContext(req, resHeaders),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") logError(`trpc:${path ?? "?"}`, error.cause ?? error);
    },
  });
}

export { handler as GET, handler as POST };
