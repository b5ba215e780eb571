import { TRPCError } from "@trpc/server";
import { headers } from "next/headers";
import { createRequestContext } from "@/src/server/api/context";
import { createCaller } from "@/src/server/api/root";

/**
 * A caller for server components, authenticated by the request's own cookie. Responses of a
 * render cannot set cookies, so anything the procedures add to the response headers is dropped.
 */
export async function serverCaller() {
  const h = await headers();
  const proto = h.get("x-forwarded-proto")?.split(",")[0]?.trim() || "http";
  const req = new Request(`${proto}://${h.get("host") ?? "localhost"}/`, { headers: h });
  return createCaller(createRequestContext(req, new Headers()));
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof TRPCError && error.code === "UNAUTHORIZED";
}
