import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** Whether the second factor is on, and how many recovery codes are left. */
export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.workspace.totpStatus());
}
