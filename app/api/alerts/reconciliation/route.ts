import { queryOf, restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** 对账 of one saved account: `?account=<id>&from=&to=&tz=`. */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.alerts.reconciliation(queryOf(req)));
}
