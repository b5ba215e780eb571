import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.workspace.apiTokens());
}

/** A new API token (`{name, access: "read"|"write"}`), shown once. */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.workspace.createApiToken(body), { readBody: true });
}
