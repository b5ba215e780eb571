import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function POST(req: Request): Promise<Response> {
  return restCall(req, async (caller) => ({ success: true, data: await caller.usage.sync() }));
}
