import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

const withId = (body: unknown, id: string) => ({ ...(typeof body === "object" && body !== null ? body : {}), id });

/** Changes the fields given; the others stay as the site has them. */
export async function PATCH(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(req, (caller, body: unknown) => caller.tokens.update(withId(body, id)), {
    readBody: true,
  });
}

export async function DELETE(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(req, (caller) => caller.tokens.remove({ ids: [id] }));
}
