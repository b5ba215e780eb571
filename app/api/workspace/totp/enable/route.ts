import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.workspace.enableTotp(body), { readBody: true });
}
