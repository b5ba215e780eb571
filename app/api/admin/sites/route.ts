import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.admin.sites());
}

export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.admin.addSite(body), { readBody: true });
}
