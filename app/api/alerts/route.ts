import { queryOf, restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The workspace's alerts, open ones first (`?state=open` for those only). */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.alerts.list(queryOf(req)));
}
