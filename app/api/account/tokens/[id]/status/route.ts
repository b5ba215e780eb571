import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

/** Enables (`{"enabled": true}`) or disables the token. */
export async function POST(req: Request, { params }: Params): Promise<Response> {
  const { id } = await params;
  return restCall(
    req,
    (caller, body: unknown) =>
      caller.tokens.setStatus({ ...(typeof body === "object" && body !== null ? body : {}), id } as never),
    { readBody: true },
  );
}
