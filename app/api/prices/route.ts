import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** Every model across the caller's accounts, with each account's price of it. */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.prices.table());
}
