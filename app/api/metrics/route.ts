import { restMetrics } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** The instance's metrics (Prometheus' text format), for the bearer of METRICS_TOKEN. */
export function GET(req: Request): Promise<Response> {
  return restMetrics(req, (caller) => caller.ops.metrics());
}
