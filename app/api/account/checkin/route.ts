import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.actions.checkinStatus());
}

/** Checks the account in when today's is not done. */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.actions.checkin());
}
