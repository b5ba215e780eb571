import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** Redeems a code (`{"code": "…"}`) on the account's site. */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.actions.redeem(body), { readBody: true });
}
