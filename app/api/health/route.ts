import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The process answers. */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.ops.health());
}
