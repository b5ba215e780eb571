import { queryOf, restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** A model's list price on each of the caller's sites over time (`?model=`). */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.prices.history(queryOf(req)));
}
