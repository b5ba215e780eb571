import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.alerts.rules());
}

/** Adds a rule (`{"kind":"balance_below","account":"all","threshold":5,"channels":[1]}`). */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.alerts.createRule(body), { readBody: true });
}
