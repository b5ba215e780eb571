import { queryOf, restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The account's group, ratio and models, and the cheapest other account for each model it used (`?account=`, `from`, `to`, `tz`). */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.prices.account(queryOf(req)));
}
