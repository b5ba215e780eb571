import { restCall } from "@/src/server/http/rest";

export const dynamic = "force-dynamic";

export function GET(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.workspace.devices());
}

/** Signs out every device of the workspace ("sign out everywhere"). */
export function DELETE(req: Request): Promise<Response> {
  return restCall(req, (caller) => caller.workspace.signOutEverywhere());
}
