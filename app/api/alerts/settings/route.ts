import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The time zone "today" is counted in (`{"timeZone":"Asia/Shanghai"}`). */
export function PATCH(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.alerts.setTimeZone(body), { readBody: true });
}
