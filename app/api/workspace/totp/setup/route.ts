import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

/** A new secret for an authenticator app; nothing changes until /api/workspace/totp/enable. */
export function POST(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.workspace.beginTotp());
}
