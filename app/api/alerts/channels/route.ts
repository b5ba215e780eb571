import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.alerts.channels());
}

/** Adds a channel (`{"type":"webhook","name":"…","url":"…","secret":"…"}`); the secret is answered once. */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.alerts.createChannel(body), { readBody: true });
}
