import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

/** Changes the threshold, step, reminder, muting or channels of a rule. */
export async function PATCH(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(
    req,
    (caller, body: unknown) =>
      caller.alerts.updateRule({ ...(typeof body === "object" && body !== null ? body : {}), id }),
    { readBody: true },
  );
}

export async function DELETE(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(req, (caller) => caller.alerts.removeRule({ id }));
}
