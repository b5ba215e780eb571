import { queryOf, restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** 如果在别处: the range's usage per model priced on every account that offers it (`?from=&to=&tz=`). */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.prices.whatif(queryOf(req)));
}
