import { queryOf, restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.account.tokens(queryOf(req)));
}

/** Creates a token (`{"name": "…", …}`) on the account's site. */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.tokens.create(body), { readBody: true });
}
