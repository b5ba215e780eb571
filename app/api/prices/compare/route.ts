import { queryOf, restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** A model's price on each of the caller's accounts (`?model=gpt-4o-mini`). */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.prices.compare(queryOf(req)));
}
