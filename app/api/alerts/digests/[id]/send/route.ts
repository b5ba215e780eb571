import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

/** Sends the last period's digest now. */
export async function POST(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(req, (caller) => caller.alerts.sendDigest({ id }));
}
