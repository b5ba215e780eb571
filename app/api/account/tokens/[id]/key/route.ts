import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

/** The token's full key and client configurations (`Cache-Control: no-store`, never kept here). */
export async function POST(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(req, (caller) => caller.tokens.reveal({ id }));
}
