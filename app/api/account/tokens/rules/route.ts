import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The site family's rules for a token, and what is left of its critical budget. */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.tokens.rules());
}
