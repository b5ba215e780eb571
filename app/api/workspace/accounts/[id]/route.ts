import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

export async function PATCH(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(
    req,
    (caller, body: unknown) =>
      caller.workspace.updateAccount({ ...(typeof body === "object" && body !== null ? body : {}), id }),
    { readBody: true },
  );
}

/** `?ledger=1` also deletes the account's ledger. */
export async function DELETE(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  const ledger = (new URL(req.url).searchParams.get("ledger") ?? undefined) as never;
  return restCall(req, (caller) => caller.workspace.removeAccount({ id, ledger }));
}
