import { restReady } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** 200 when this instance can serve, 503 with the reasons when it cannot. */
export function GET(req: Request): Promise<Response> {
  return restReady(req, (caller) => caller.ops.ready());
}
