import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.alerts.digests());
}

/** Sets the digest of a cadence (`{"cadence":"daily","time":"09:00","channels":[1]}`). */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.alerts.setDigest(body), { readBody: true });
}
