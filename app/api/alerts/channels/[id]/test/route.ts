import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

/** Sends a test message to the channel now. */
export async function POST(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(req, (caller) => caller.alerts.testChannel({ id }));
}
