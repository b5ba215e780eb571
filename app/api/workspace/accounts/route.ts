import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.workspace.accounts());
}

/** Saves an account once its site accepted the token. */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.workspace.addAccount(body), { readBody: true });
}
