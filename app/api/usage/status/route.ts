import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, async (caller) => ({ success: true, data: await caller.usage.status() }));
}
