import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export async function POST(req: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await params;
  return restCall(req, (caller) => caller.admin.probe({ id }));
}
