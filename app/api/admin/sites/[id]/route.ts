import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

export async function PATCH(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(
    req,
    (caller, body: unknown) =>
      caller.admin.editSite({ ...(typeof body === "object" && body !== null ? body : {}), id }),
    { readBody: true },
  );
}

/** `?confirm=1` removes; without it the answer says how many live sessions the site has. */
export async function DELETE(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  const confirm = new URL(req.url).searchParams.get("confirm") ?? undefined;
  return restCall(req, (caller) => caller.admin.removeSite({ id, confirm }));
}
