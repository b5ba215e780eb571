import { restFile } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ token: string }> };

/** The month's statement behind a one-time link (sent by the monthly digest). */
export async function GET(req: Request, { params }: Params): Promise<Response> {
  const { token } = await params;
  return restFile(req, (caller) => caller.alerts.statementByLink({ token }));
}
