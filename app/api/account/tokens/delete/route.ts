import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** Deletes several tokens at once (`{"ids": [12, 13]}`). */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller, body) => caller.tokens.remove(body), { readBody: true });
}
